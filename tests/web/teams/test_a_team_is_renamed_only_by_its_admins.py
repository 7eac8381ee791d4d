"""A team's name and slug are changed in the admin by its admins (or a superuser) only.

Agents address a sandbox as "team/name". A staff user who could rename a team they have no
role in could free its slug and give it to a team of their own: the agents of its members
would then submit their tasks, prompts and scripts into a sandbox the staff user reviews.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.catalog.services import sandbox_create
from jazzmine_web.teams.models import Role, Team
from jazzmine_web.teams.services import api_token_create, membership_set, team_create
from tests.web.helpers import staff_browser, teammate

pytestmark = pytest.mark.django_db

# The team page's membership inline, sent empty: only the team's own fields change.
NO_MEMBERSHIPS = {"memberships-TOTAL_FORMS": "0", "memberships-INITIAL_FORMS": "0"}


def rename(browser: Client, team: Team, *, name: str, slug: str):
    url = f"/admin/teams/team/{team.pk}/change/"
    return browser.post(url, {"name": name, "slug": slug, **NO_MEMBERSHIPS})


def test_a_staff_user_outside_a_team_cannot_rename_it(team, outsider) -> None:
    response = rename(staff_browser(outsider, "teams"), team, name="Renamed", slug="renamed")
    assert response.status_code == 403
    team.refresh_from_db()
    assert (team.name, team.slug) == ("Shop", "shop")


def test_a_member_who_is_staff_cannot_rename_their_team_either(team, member) -> None:
    response = rename(staff_browser(member, "teams"), team, name="Renamed", slug="renamed")
    assert response.status_code == 403
    team.refresh_from_db()
    assert team.slug == "shop"


def test_an_agent_addressing_team_and_sandbox_is_not_sent_to_another_teams_sandbox(
    ecommerce, team, member, outsider
) -> None:
    # Mallory runs a team of her own, with a sandbox of the same name, and (as its admin may)
    # adds ada to it; she is staff, but has no role in ada's team "shop".
    evil = team_create(name="Evil", slug="evil")
    membership_set(team=evil, user=outsider, role=Role.ADMIN)
    membership_set(team=evil, user=member, role=Role.MEMBER)
    sandbox_create(team=evil, name="ecommerce")
    browser = staff_browser(outsider, "teams")
    rename(browser, team, name="Shop", slug="shop-old")
    rename(browser, evil, name="Shop", slug="shop")
    agent = Client(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=member, name='ci').raw}")
    payload = {"sandbox": "shop/ecommerce", "task": "Total of orders", "body": "emit_result(1)\n"}
    state = agent.post("/api/v1/submissions/", payload, content_type="application/json").json()
    assert state["sandbox"]["id"] == ecommerce.pk


def test_a_team_admin_still_renames_their_own_team(team) -> None:
    response = rename(
        staff_browser(teammate(team, Role.ADMIN), "teams"), team, name="Shop EU", slug="shop-eu"
    )
    assert response.status_code == 302
    team.refresh_from_db()
    assert (team.name, team.slug) == ("Shop EU", "shop-eu")


def test_a_superuser_renames_any_team(team, django_user_model) -> None:
    root = django_user_model.objects.create_superuser(username="root", password="x" * 12)
    client = Client()
    client.force_login(root)
    assert rename(client, team, name="Shop EU", slug="shop-eu").status_code == 302
    team.refresh_from_db()
    assert team.slug == "shop-eu"
