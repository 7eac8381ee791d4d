"""A playground session opens only in a sandbox its user may still see: one opened before its
user left the team shows nothing of the team's sandbox (its prompt, tools, attempts) until they
are added back. Another user's session, or an id that is no session, is simply not found."""

from __future__ import annotations

import pytest

from jazzmine_web.catalog.services import sandbox_create, tool_create
from jazzmine_web.playground.models import AttemptSource
from jazzmine_web.playground.services import attempt_record, session_open
from jazzmine_web.teams.models import Membership, Role, Team
from jazzmine_web.teams.services import membership_set, team_create
from tests.web.helpers import teammate

pytestmark = pytest.mark.django_db

PLAN = '''def quarterly_plan(region: str) -> dict:
    """Return the confidential plan."""
    return {}
'''


@pytest.fixture
def session(ecommerce, member):
    session = session_open(user=member, sandbox=ecommerce, task="Show the first order")
    for body in ("emit_result(get_orders().data[0])\n", "emit_result(1)\n"):
        attempt_record(session=session, source=AttemptSource.HUMAN, prompt="p", body=body)
    return session


@pytest.fixture
def added_after_she_left(ecommerce):
    """A tool the team adds once she is gone: nothing of it may reach her."""

    def add() -> None:
        tool_create(
            sandbox=ecommerce,
            name="quarterly_plan",
            description="Confidential acquisition plan.",
            source=PLAN,
        )

    return add


def pages(session) -> dict[str, str]:
    return {
        "playground": f"/playground/?session={session.pk}",
        "attempts": f"/playground/sessions/{session.pk}/attempts/",
        "compare": f"/playground/sessions/{session.pk}/compare/?a=1&b=2",
    }


def leave_the_team(user) -> None:
    Membership.objects.filter(user=user).delete()


def move_to_another_team(user) -> None:
    leave_the_team(user)
    membership_set(team=team_create(name="Other", slug="other"), user=user, role=Role.ADMIN)


@pytest.mark.parametrize("leave", [leave_the_team, move_to_another_team])
def test_a_former_member_reads_nothing_of_the_sandbox_through_an_old_session(
    leave, client, member, session, added_after_she_left
) -> None:
    leave(member)
    added_after_she_left()
    client.force_login(member)
    for name, url in pages(session).items():
        response = client.get(url)
        assert response.status_code == 404, name
        assert b"Confidential acquisition plan" not in response.content, name
        assert b"quarterly_plan" not in response.content, name
        assert b"get_orders().data[0]" not in response.content, name


def test_the_old_session_is_not_among_her_recent_sessions(client, member, session) -> None:
    move_to_another_team(member)
    sandbox_create(team=Team.objects.get(slug="other"), name="theirs")  # the page has a sandbox
    client.force_login(member)
    page = client.get("/playground/")
    assert page.status_code == 200 and b"theirs" in page.content
    assert str(session.pk).encode() not in page.content
    assert b"Show the first order" not in page.content


def test_added_back_she_opens_it_again_as_it_is_now(
    client, member, session, team, added_after_she_left
) -> None:
    client.force_login(member)
    assert all(client.get(url).status_code == 200 for url in pages(session).values())
    leave_the_team(member)
    assert all(client.get(url).status_code == 404 for url in pages(session).values())
    added_after_she_left()
    membership_set(team=team, user=member, role=Role.MEMBER)
    for name, url in pages(session).items():
        assert client.get(url).status_code == 200, name
    assert b"quarterly_plan" in client.get(pages(session)["playground"]).content


def test_another_users_session_is_not_found(client, team, session) -> None:
    # Grace is in the same team and sees the sandbox: the session is still ada's own.
    grace = teammate(team, Role.ADMIN)
    client.force_login(grace)
    for name, url in pages(session).items():
        response = client.get(url)
        assert response.status_code == 404, name
        assert b"get_orders().data[0]" not in response.content, name


@pytest.mark.parametrize("session_id", ["not-a-uuid", "1", "00000000-0000-0000-0000-000000000000"])
def test_an_id_that_is_no_session_is_not_found(client, member, ecommerce, session_id) -> None:
    client.force_login(member)
    assert client.get(f"/playground/?session={session_id}").status_code == 404
    assert client.get(f"/playground/sessions/{session_id}/attempts/").status_code == 404
    assert client.get(f"/playground/sessions/{session_id}/compare/?a=1&b=2").status_code == 404
