"""The review gate reads `tool_is_always_allowed`: asked for, and the current code accepted."""

from __future__ import annotations

import html
import re

import pytest
from django.core.exceptions import PermissionDenied

from jazzmine_web.catalog.selectors import tool_is_always_allowed
from jazzmine_web.catalog.services import tool_always_allow_accept, tool_create, tool_update
from tests.web.helpers import tool_accept_post

pytestmark = pytest.mark.django_db

PING = "def ping(host):\n    return ToolResponse(success=True)\n"


@pytest.fixture
def allowed(empty_sandbox, team_admin):
    return tool_create(
        sandbox=empty_sandbox, name="ping", description="Ping.", source=PING,
        always_allow=True, actor=team_admin,
    )  # fmt: skip


def test_an_admin_marking_a_tool_always_allowed_accepts_its_code(allowed) -> None:
    assert tool_is_always_allowed(allowed) and allowed.always_allow_accepted_by.username == "grace"


def test_a_members_code_change_waits_for_an_admin_and_makes_a_version(
    allowed, member, team_admin
) -> None:
    change = tool_update(tool=allowed, source=PING.replace("True)", "True )"), actor=member)
    assert change.new_version is not None
    assert allowed.always_allow is True and not tool_is_always_allowed(allowed)
    assert allowed.always_allow_pending
    with pytest.raises(PermissionDenied):
        tool_always_allow_accept(tool=allowed, actor=member)
    tool_always_allow_accept(tool=allowed, actor=team_admin)
    allowed.refresh_from_db()
    assert tool_is_always_allowed(allowed)


def test_a_dependency_change_also_waits(allowed, member) -> None:
    tool_update(tool=allowed, dependencies=["httpx"], actor=member)
    assert not tool_is_always_allowed(allowed)


def test_a_trusted_import_asking_for_always_allow_is_not_in_effect_until_accepted(
    empty_sandbox,
) -> None:
    tool = tool_create(
        sandbox=empty_sandbox, name="ping", description="Ping.", source=PING, always_allow=True
    )
    assert tool.always_allow and not tool_is_always_allowed(tool)


def test_an_admin_accepts_a_pending_tool_on_its_page(client, allowed, member, team_admin) -> None:
    tool_update(tool=allowed, source=PING.replace("True)", "True )"), actor=member)
    client.force_login(member)
    page = client.get(f"/catalog/tools/{allowed.pk}/").content.decode()
    assert 'id="always-allow-pending"' in page and "accept-always-allow" not in page
    assert tool_accept_post(client, allowed).status_code == 403
    client.force_login(team_admin)
    tool_accept_post(client, allowed)
    allowed.refresh_from_db()
    assert tool_is_always_allowed(allowed)
    assert 'id="always-allowed"' in client.get(f"/catalog/tools/{allowed.pk}/").content.decode()


def test_always_allow_and_secrets_changes_are_versions_with_a_diff_and_rollback(
    client, allowed, team_admin
) -> None:
    tool_update(tool=allowed, always_allow=False, secrets=["API_KEY"], actor=team_admin)
    versions = list(allowed.versions.order_by("number"))
    assert [v.always_allow for v in versions] == [True, False]
    client.force_login(team_admin)
    diff = client.get(f"/catalog/tools/{allowed.pk}/versions/2/diff/").content.decode()
    assert "-# always_allow: true" in diff and "+# always_allow: false" in diff
    assert "API_KEY" in diff
    client.post(f"/catalog/tools/{allowed.pk}/versions/1/rollback/")
    allowed.refresh_from_db()
    assert allowed.always_allow and allowed.secrets == [] and tool_is_always_allowed(allowed)


def test_a_rollback_says_it_puts_review_and_secrets_back_before_and_after(
    client, allowed, team_admin
) -> None:
    # The dialog said "code, needs and prompt" only: always-allow went off again unsaid.
    tool_update(tool=allowed, always_allow=False, secrets=["API_KEY"], actor=team_admin)
    client.force_login(team_admin)
    page = html.unescape(client.get(f"/catalog/tools/{allowed.pk}/").content.decode())
    asked = re.search(r'/versions/1/rollback/" data-confirm="([^"]+)"', page)
    assert asked is not None, page
    assert "Always-allow turns on, as v1 had it." in asked[1]
    assert "Its secrets become v1's: none." in asked[1]
    answer = client.post(f"/catalog/tools/{allowed.pk}/versions/1/rollback/", follow=True)
    said = html.unescape(answer.content.decode())
    assert "Always-allow is on again, as v1 had it: scripts call" in said
    assert "Its secrets are as v1 had them again: none" in said
    # Back to v2: the dialog and the message say it the other way round.
    page = html.unescape(client.get(f"/catalog/tools/{allowed.pk}/").content.decode())
    asked = re.search(r'/versions/2/rollback/" data-confirm="([^"]+)"', page)
    assert "Always-allow turns off" in asked[1] and "secrets become v2's: API_KEY" in asked[1]
    said = html.unescape(
        client.post(
            f"/catalog/tools/{allowed.pk}/versions/2/rollback/", follow=True
        ).content.decode()
    )
    assert "Always-allow is off again, as v2 had it: a script calling" in said
