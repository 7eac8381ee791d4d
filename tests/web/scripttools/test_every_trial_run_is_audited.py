"""A trial run of a script tool is a run: the audit trail names who started it, says it came from a
trial, and holds the SHA-256 of the exact code the trial runs."""

from __future__ import annotations

import hashlib

import pytest
from django.test import Client

from jazzmine_web.catalog.services import script_tool_save
from jazzmine_web.reviews.models import AuditAction, AuditEntry
from jazzmine_web.scripttools.models import TrialRun
from jazzmine_web.scripttools.services import trial_execute
from jazzmine_web.teams.models import Role
from tests.web.helpers import teammate, tool_form_post

from .conftest import make_tool

pytestmark = pytest.mark.django_db

ECHO = 'import json\nprint(json.dumps({"ok": True}))\n'


@pytest.fixture
def echo(sandbox, member):
    row, _ = script_tool_save(sandbox=sandbox, tool=make_tool("echo_tool", ECHO), author=member)
    return row


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def started_on_the_page(client, row) -> tuple[TrialRun, AuditEntry]:
    before = set(AuditEntry.objects.values_list("pk", flat=True))
    assert client.post(f"/catalog/tools/{row.pk}/trials/", {}).status_code in (200, 302)
    trial = TrialRun.objects.filter(tool=row).latest("created_at")
    [entry] = AuditEntry.objects.exclude(pk__in=before)
    return trial, entry


def test_a_members_trial_is_in_the_audit_with_who_when_and_the_codes_sha256(echo, member):
    trial, entry = started_on_the_page(browser(member), echo)
    assert entry.action == AuditAction.RUN_CREATED
    assert entry.actor_user == member and entry.actor_label == member.get_username()
    assert entry.code_sha256 == hashlib.sha256(ECHO.encode()).hexdigest()
    assert entry.sandbox_id == echo.sandbox_id
    assert entry.data["source"] == "trial" and entry.data["trial_id"] == str(trial.pk)
    assert entry.data["tool"] == "echo_tool" and entry.data["tool_checksum"] == trial.checksum


def test_each_trial_of_new_code_is_audited_with_that_codes_sha256(echo, member, team):
    admin = teammate(team, Role.ADMIN, username="root_admin")
    first = started_on_the_page(browser(member), echo)[1]
    changed = ECHO.replace('"ok"', '"fine"')
    tool_form_post(browser(member), echo, source=changed)
    echo.refresh_from_db()
    second = started_on_the_page(browser(admin), echo)[1]
    assert first.code_sha256 != second.code_sha256
    assert second.code_sha256 == hashlib.sha256(changed.encode()).hexdigest()
    assert second.actor_user == admin


def test_the_audit_page_lists_the_trial(echo, member, team):
    started_on_the_page(browser(member), echo)
    admin = teammate(team, Role.ADMIN, username="root_admin")
    page = browser(admin).get("/reviews/audit/").content.decode()
    assert "trial run of script tool echo_tool" in page


def test_a_trial_never_runs_code_other_than_the_code_audited(echo, member):
    trial, _entry = started_on_the_page(browser(member), echo)
    # The code changes after the trial was asked for, before a worker takes it.
    tool_form_post(browser(member), echo, source=ECHO.replace('"ok"', '"other"'))
    done = trial_execute(trial_id=trial.pk)
    assert not done.passed and "changed since this trial was asked for" in done.message
