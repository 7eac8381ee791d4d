"""Upgrading to script tool code that leaves its description out keeps every decision on it.

A script tool's description was the docstring of its generated function, so part of its
`code_digest` and checksum (catalog 0015 takes it out). What was decided on a script tool's
code as it is today (an admin's acceptance, a trial's pass, a waiting run's pins, a pending
submission's reading) is carried over to the new digest, and its checksum becomes the
registry's: nothing is withheld, unpublished or refused as "recoded" by the upgrade alone.
A digest of other code stays unmatched, as it was.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from jazzmine.scripttools import load_tool_dir
from jazzmine.scripttools.adapter import runner_fields
from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.script_rows import script_tool_from_row
from jazzmine_web.catalog.services import script_tool_save, tool_publish
from jazzmine_web.reviews.models import Submission
from jazzmine_web.runs.models import Run
from jazzmine_web.runs.services import run_create
from jazzmine_web.scripttools.models import TrialRun
from jazzmine_web.scripttools.selectors import latest_passed_trial
from tests.scripttools.samples import RSI
from tests.web.helpers import migrate

from .conftest import set_policy, submit

OTHER = "f" * 64
OLD_CHECKSUM = "0123456789abcdef"  # what the template of before made of the code


def before(tool: Tool) -> str:
    """The digest of a script tool's code as the releases before this one wrote it."""
    script = script_tool_from_row(tool)
    assert script is not None
    doc = script.description.strip().splitlines()[0]
    fields = {**runner_fields(script), "doc": doc}
    text = json.dumps(
        ["script", fields, sorted(set(tool.dependencies))], sort_keys=True, ensure_ascii=True
    )
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def rsi(ecommerce, team_admin) -> Tool:
    row, _ = script_tool_save(
        sandbox=ecommerce, tool=load_tool_dir(RSI), author=team_admin, actor=team_admin
    )
    return tool_publish(tool=row)


@pytest.mark.django_db(transaction=True)
def test_acceptances_trials_pins_and_readings_of_todays_code_are_carried_over(
    api, ecommerce, member, rsi
):
    set_policy(ecommerce)
    today, checksum = rsi.code_digest, rsi.checksum
    assert today != before(rsi)  # the formula did change
    # The rows as the release before left them: its digests and checksum.
    Tool.objects.filter(pk=rsi.pk).update(
        accepted_code_digest=before(rsi),
        trial_accepted_code_digest=before(rsi),
        checksum=OLD_CHECKSUM,
        always_allow_accepted_checksum=OLD_CHECKSUM,
    )
    passed = TrialRun.objects.create(
        tool=rsi, checksum=OLD_CHECKSUM, code_digest=before(rsi), state="done", passed=True
    )
    older = TrialRun.objects.create(
        tool=rsi, checksum="feedfeedfeedfeed", code_digest=OTHER, state="done", passed=True
    )
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False,
                     allowed_tools={"calculate_rsi": before(rsi), "get_user": OTHER})  # fmt: skip
    pending = submit(api, ecommerce, body='emit_result(calculate_rsi(symbol="AAPL").data)\n')
    assert pending.json()["status"] == "pending", pending.json()
    submission = Submission.objects.get(pk=pending.json()["id"])
    listed = [
        {**t, "code_digest": before(rsi)} if t["name"] == "calculate_rsi" else t
        for t in submission.tools_called
    ]
    assert any(t["name"] == "calculate_rsi" for t in listed), listed
    Submission.objects.filter(pk=submission.pk).update(tools_called=listed)
    try:
        migrate(
            ("catalog", "0014_tool_json_keeps_its_keys_order"),
            ("scripttools", "0004_trial_image_wheels"),
            ("runs", "0010_pins_bind_documented_parameters"),
            ("reviews", "0011_readings_bind_documented_parameters"),
        )
    finally:
        migrate()

    rsi.refresh_from_db()
    assert rsi.checksum == checksum  # the registry's today
    assert rsi.accepted_code_digest == rsi.trial_accepted_code_digest == today
    assert rsi.code_accepted and rsi.published
    passed.refresh_from_db()
    older.refresh_from_db()
    assert (passed.code_digest, passed.checksum) == (today, checksum)
    assert latest_passed_trial(rsi) == passed
    assert older.code_digest == OTHER
    assert Run.objects.get(pk=run.pk).allowed_tools == {
        "calculate_rsi": today, "get_user": OTHER
    }  # fmt: skip
    read = {
        t["name"]: t["code_digest"] for t in Submission.objects.get(pk=submission.pk).tools_called
    }
    assert read["calculate_rsi"] == today


@pytest.mark.django_db(transaction=True)
def test_an_acceptance_of_other_code_stays_unmatched(ecommerce, rsi):
    Tool.objects.filter(pk=rsi.pk).update(
        accepted_code_digest=OTHER, checksum=OLD_CHECKSUM, always_allow_accepted_checksum="a" * 16
    )
    try:
        migrate(("catalog", "0014_tool_json_keeps_its_keys_order"))
    finally:
        migrate()
    rsi.refresh_from_db()
    assert rsi.accepted_code_digest == OTHER
    assert rsi.always_allow_accepted_checksum == "a" * 16
    assert not rsi.code_accepted
