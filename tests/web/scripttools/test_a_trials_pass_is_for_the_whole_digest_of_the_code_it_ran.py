"""A trial's pass publishes, and a trial runs, only the code of the whole digest it was asked for.

A trial recorded the tool's checksum, 16 hex chars, and the publish gate and the trial runner
compared that. Two codes of one checksum take some 2^32 tries to find (minutes of one core):
a member could have a trial of a harmless script pass, save other code of that checksum (new
code is taken out of the LLM's reach) and press Publish, and the harmless code's pass put the
other before the LLMs untried. Or start a trial of the harmless code and save the other before
a worker took it: the other ran, recorded and audited as the harmless code. Now a trial
records the tool's whole `code_digest`, and the gate and the runner compare that.

A collision cannot be ground in test time: the tests write the row state saving one leaves,
the tool's script changed while its checksum column stays the one the trial recorded.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import script_tool_save
from jazzmine_web.reviews.models import AuditEntry
from jazzmine_web.scripttools.models import TrialRun
from jazzmine_web.scripttools.services import PublishRefused, script_tool_publish, trial_execute
from tests.web.helpers import migrate

from .conftest import make_tool

HARMLESS = 'import json\nprint(json.dumps({"rsi": 50}))\n'
OTHER = 'import json, os\nprint(json.dumps({"home": os.environ.get("HOME", "other code")}))\n'


@pytest.fixture
def probe(sandbox, member) -> Tool:
    row, _ = script_tool_save(sandbox=sandbox, tool=make_tool("probe", HARMLESS), author=member)
    return row


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def started_on_the_page(client: Client, row: Tool) -> TrialRun:
    """Press Run trial on the tool's page; the trial waits for a worker."""
    assert client.post(f"/catalog/tools/{row.pk}/trials/", {}).status_code in (200, 302)
    return TrialRun.objects.filter(tool=row).latest("created_at")


def swap_in_code_of_the_same_checksum(row: Tool, source: str) -> None:
    """Leave the row as saving other code of the same checksum leaves it (see the docstring):
    the script is the other one, the checksum column what it was, and it is unpublished."""
    checksum = row.checksum
    Tool.objects.filter(pk=row.pk).update(source=source, published=False, published_at=None)
    row.refresh_from_db()
    assert row.checksum == checksum and row.source == source


@pytest.mark.docker
@pytest.mark.django_db
def test_a_pass_of_one_code_does_not_publish_other_code_of_its_checksum(
    probe, member, base_image
) -> None:
    client = browser(member)
    trial = trial_execute(trial_id=started_on_the_page(client, probe).pk)
    assert trial.passed, trial.message
    swap_in_code_of_the_same_checksum(probe, OTHER)

    page = client.get(f"/catalog/tools/{probe.pk}/").content.decode()
    assert 'id="publish-button" disabled' in page
    assert "ran older code" in page  # the pass shown is the harmless code's, not this code's
    url = f"/catalog/tools/{probe.pk}/publish/"
    refused = client.post(url, {"published": "1"}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 422 and b"cannot be published" in refused.content
    probe.refresh_from_db()
    assert not probe.published

    # A trial of the code it has now passes, and that one publishes it.
    assert trial_execute(trial_id=started_on_the_page(client, probe).pk).passed
    done = client.post(url, {"published": "1"}, HTTP_HX_REQUEST="true")
    assert done.status_code == 200 and b'data-published="yes"' in done.content


@pytest.mark.django_db
def test_a_trial_asked_for_one_code_never_runs_other_code_of_its_checksum(probe, member) -> None:
    trial = started_on_the_page(browser(member), probe)
    swap_in_code_of_the_same_checksum(probe, OTHER)  # before a worker takes the trial
    done = trial_execute(trial_id=trial.pk)
    assert not done.passed and "changed since this trial was asked for" in done.message
    assert done.stdout == "" and done.data is None
    with pytest.raises(PublishRefused, match="cannot be published"):
        script_tool_publish(tool=probe)


@pytest.mark.django_db
def test_the_audit_names_the_whole_digest_of_the_code_a_trial_may_run(probe, member) -> None:
    before = set(AuditEntry.objects.values_list("pk", flat=True))
    trial = started_on_the_page(browser(member), probe)
    [entry] = AuditEntry.objects.exclude(pk__in=before)
    assert entry.data["tool_code_digest"] == probe.code_digest == trial.code_digest
    assert len(probe.code_digest) == 64
    assert entry.data["tool_checksum"] == probe.checksum  # still there, as a short name


@pytest.mark.django_db(transaction=True)
def test_trials_of_the_tools_code_today_keep_counting_after_the_upgrade(probe, member) -> None:
    """As catalog migration 0008 kept acceptances: a trial recorded with the checksum the tool
    has now counts for its current code; one of other code (another checksum) for none."""
    old = migrate(("scripttools", "0002_worker_and_heartbeat"))
    try:
        OldTrial = old.get_model("scripttools", "TrialRun")
        fields = {"tool_id": probe.pk, "state": "done", "status": "valid_json", "passed": True}
        today = OldTrial.objects.create(checksum=probe.checksum, **fields).pk
        older = OldTrial.objects.create(checksum="0123456789abcdef", **fields).pk
    finally:
        migrate()

    assert TrialRun.objects.get(pk=today).code_digest == probe.code_digest
    assert TrialRun.objects.get(pk=older).code_digest == ""
    script_tool_publish(tool=probe)  # published on the trial of today's code
    probe.refresh_from_db()
    assert probe.published
