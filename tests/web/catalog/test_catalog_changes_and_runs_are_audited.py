"""Every change of what review means, and every run, is in the audit trail: who, when, what."""

from __future__ import annotations

import pytest

from jazzmine_web.catalog.services import (
    sandbox_update,
    secret_value_clear,
    secret_value_set,
    tool_always_allow_accept,
    tool_create,
    tool_delete,
    tool_update,
)
from jazzmine_web.reviews.models import AuditAction, AuditEntry
from jazzmine_web.runs.models import code_sha256
from jazzmine_web.runs.services import run_create

pytestmark = pytest.mark.django_db

PING = "def ping(host):\n    return ToolResponse(success=True)\n"


def _last(action: str) -> AuditEntry:
    return AuditEntry.objects.filter(action=action).order_by("-pk").first()


def test_turning_always_allow_on_and_off_leaves_a_trace_with_before_and_after(
    empty_sandbox, team_admin
) -> None:
    tool = tool_create(sandbox=empty_sandbox, name="ping", description="Ping.", source=PING)
    tool_update(tool=tool, always_allow=True, actor=team_admin)
    tool_update(tool=tool, always_allow=False, actor=team_admin)
    on, off = AuditEntry.objects.filter(action=AuditAction.TOOL_CHANGED).order_by("pk")
    assert on.actor_user == team_admin and on.data["changes"]["always_allow"] == [False, True]
    assert off.data["changes"]["always_allow"] == [True, False]
    assert "always_allow: false → true" in on.note


def test_a_members_code_change_to_an_always_allowed_tool_and_its_acceptance_are_audited(
    empty_sandbox, member, team_admin
) -> None:
    tool = tool_create(sandbox=empty_sandbox, name="ping", description="Ping.", source=PING,
                       always_allow=True, actor=team_admin)  # fmt: skip
    old, old_digest = tool.checksum, tool.code_digest
    tool_update(tool=tool, source=PING.replace("True)", "True )"), actor=member)
    change = _last(AuditAction.TOOL_CHANGED)
    assert change.actor_user == member
    assert change.data["changes"]["code_checksum"] == [old, tool.checksum]
    # The code whole, as runs name it: the 16-hex checksum alone may collide.
    assert change.data["changes"]["code_digest"] == [old_digest, tool.code_digest]
    assert change.code_sha256 == tool.code_digest and len(tool.code_digest) == 64
    assert change.data["changes"]["always_allowed_in_effect"] == [True, False]
    tool_always_allow_accept(tool=tool, actor=team_admin)
    accepted = _last(AuditAction.TOOL_ACCEPTED)
    assert accepted.actor_user == team_admin
    assert accepted.code_sha256 == tool.code_digest == tool.accepted_code_digest
    assert accepted.data["changes"]["accepted_code_digest"] == [old_digest, tool.code_digest]


def test_sandbox_limits_network_secrets_and_deletions_are_audited(ecommerce, team_admin) -> None:
    sandbox_update(sandbox=ecommerce, network=True, memory_mb=512, actor=team_admin)
    entry = _last(AuditAction.SANDBOX_CHANGED)
    assert entry.data["changes"]["network"] == [False, True]
    assert entry.data["changes"]["memory_mb"] == [256, 512]
    secret_value_set(sandbox=ecommerce, name="MAIL_API_TOKEN", value="s3cr3t", user=team_admin,
                     actor=team_admin)  # fmt: skip
    secret_value_clear(sandbox=ecommerce, name="MAIL_API_TOKEN", actor=team_admin)
    assert _last(AuditAction.SECRET_SET).actor_user == team_admin
    assert _last(AuditAction.SECRET_CLEARED).data["target"] == "secret MAIL_API_TOKEN"
    assert "s3cr3t" not in str(list(AuditEntry.objects.values_list("note", "data")))
    tool_delete(tool=ecommerce.tools.get(name="get_user"), actor=team_admin)
    assert _last(AuditAction.TOOL_DELETED).data["target"] == "tool get_user"


def test_every_run_is_audited_with_who_started_it_and_the_code_sha256(ecommerce, member) -> None:
    run = run_create(
        sandbox=ecommerce, user=member, body="emit_result(1)\n", source="api", start=False
    )
    entry = _last(AuditAction.RUN_CREATED)
    assert entry.actor_user == member and entry.data["run_id"] == str(run.pk)
    assert entry.code_sha256 == run.code_sha256 == code_sha256(run.script)
    assert entry.data["source"] == "api"


def test_the_audit_page_shows_the_change(client, member, team_admin, empty_sandbox) -> None:
    sandbox_update(sandbox=empty_sandbox, network=True, actor=team_admin)
    client.force_login(member)
    page = client.get("/reviews/audit/").content.decode()
    assert "Sandbox changed" in page and "grace" in page and "network: false → true" in page
