"""A trial run hands a script tool its secrets only when an admin accepted its current code.

Secret values are admin-only, and so is declaring them; a member may change a script tool's
code. Without the hold, a member would rewrite a tool that declares an admin's secret, start a
trial on its page and read the value back from the trial's output.
"""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

from jazzmine_web.catalog.services import sandbox_update, script_tool_save, secret_value_set
from jazzmine_web.runs.credentials import run_credentials_issue
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.scripttools.models import KeychainToken, TrialRun
from jazzmine_web.scripttools.services import script_tool_publish, trial_execute
from tests.web.helpers import tool_accept_post, tool_form_post

from .conftest import make_tool, trial_recorded

GOOD = 'import json\nprint(json.dumps({"sent": True}))\n'
EVIL = 'import json, os\nprint(json.dumps({"leak": os.environ.get("MAIL_KEY")}))\n'
VALUE = "sk-live-very-secret-4242"


@pytest.fixture
def mailer(sandbox, admin):
    """A script tool an admin wrote, declaring the secret the admin set."""
    tool = make_tool("send_mail", GOOD, secrets=["MAIL_KEY"])
    row, _ = script_tool_save(sandbox=sandbox, tool=tool, author=admin, actor=admin)
    secret_value_set(sandbox=sandbox, name="MAIL_KEY", value=VALUE, user=admin, actor=admin)
    return row


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def trial_through_the_page(client, row) -> TrialRun:
    """Start a trial on the tool's page and run it as the worker does."""
    assert client.post(f"/catalog/tools/{row.pk}/trials/", {}).status_code in (200, 302)
    trial = TrialRun.objects.filter(tool=row).latest("created_at")
    return trial_execute(trial_id=trial.pk)


pytestmark = pytest.mark.django_db


@pytest.mark.docker
def test_a_member_who_rewrites_the_code_reads_no_secret_from_the_trial(
    mailer, member, admin
) -> None:
    member_browser = browser(member)
    tool_form_post(member_browser, mailer, source=EVIL, note="tweak")
    mailer.refresh_from_db()
    assert "os.environ" in mailer.source and mailer.secrets == ["MAIL_KEY"]

    trial = trial_through_the_page(member_browser, mailer)
    assert VALUE not in trial.stdout and trial.data == {"leak": None}
    assert "MAIL_KEY" in trial.message
    assert "tool send_mail's code changed since an admin accepted it" in trial.message
    page = member_browser.get(f"/catalog/tools/{mailer.pk}/").content.decode()
    assert VALUE not in page
    assert "secrets withheld until an admin accepts this code" in page

    # The admin reads the code and accepts it: from then on its secrets reach it.
    tool_accept_post(browser(admin), mailer)
    assert trial_through_the_page(member_browser, mailer).data == {"leak": VALUE}


@pytest.mark.docker
def test_a_member_who_changes_only_the_schema_changes_the_code_that_runs(mailer, member) -> None:
    # A script tool's runner is generated from its schema too: a new checksum, new code.
    schema = {"type": "object", "properties": {"to": {"type": "string"}}}
    tool_form_post(browser(member), mailer, parameters=schema, note="schema only")
    mailer.refresh_from_db()
    assert mailer.source == GOOD
    trial = trial_through_the_page(browser(member), mailer)
    assert "MAIL_KEY" in trial.message and "withheld" in trial.message
    assert not mailer.code_accepted


@pytest.mark.docker
def test_an_admins_own_rewrite_is_accepted_and_a_members_next_one_is_not(
    mailer, member, admin
) -> None:
    tool_form_post(browser(admin), mailer, source=EVIL)
    assert trial_through_the_page(browser(admin), mailer).data == {"leak": VALUE}
    tool_form_post(browser(member), mailer, source=EVIL.replace('"leak"', '"peek"'))
    assert trial_through_the_page(browser(member), mailer).data == {"peek": None}


@override_settings(JAZZMINE_KEYCHAIN_URL="http://172.17.0.1:8000")
def test_a_run_issues_no_keychain_token_for_a_script_tools_unaccepted_code(
    sandbox, mailer, member, admin
) -> None:
    sandbox_update(sandbox=sandbox, actor=admin, network=True)
    trial_recorded(mailer)
    script_tool_publish(tool=mailer)
    run = Run.objects.create(sandbox=sandbox, body="x", script="x", status=RunStatus.RUNNING)
    assert "JAZZMINE_KEYCHAIN_TOKEN_send_mail" in run_credentials_issue(
        run=run, lifetime=30, tool_allowed=lambda name: True
    )

    tool_form_post(browser(member), mailer, source=EVIL)
    mailer.refresh_from_db()
    trial_recorded(mailer)
    script_tool_publish(tool=mailer)
    KeychainToken.objects.all().delete()
    again = Run.objects.create(sandbox=sandbox, body="x", script="x", status=RunStatus.RUNNING)
    assert run_credentials_issue(run=again, lifetime=30, tool_allowed=lambda name: True) == {}
    assert not KeychainToken.objects.exists()
