"""A person in no team is told what comes first, not sent to a form that can only refuse.

The superuser the README's team set-up makes logged in to "Ask a team admin to add you, or
create a sandbox"; the sandbox form's Team list was empty, and Save said only the browser's
"Please select an item in the list".
"""

from __future__ import annotations

import pytest

from jazzmine_web.catalog.models import Sandbox

pytestmark = pytest.mark.django_db


def test_a_superuser_in_no_team_is_pointed_at_the_admin_sites_teams(client, django_user_model):
    ops = django_user_model.objects.create_superuser(username="ops", password="x" * 12)
    client.force_login(ops)
    for url in ("/", "/catalog/sandboxes/new/"):
        page = client.get(url).content.decode()
        assert 'id="no-team"' in page and "You are in no team yet" in page
        assert 'href="/admin/teams/team/add/"' in page
        assert 'name="team"' not in page  # no form to fill in for nothing
    response = client.post("/catalog/sandboxes/new/", {"name": "scratch"})
    assert response.status_code == 409 and 'id="no-team"' in response.content.decode()
    assert not Sandbox.objects.exists()
    assert client.get("/admin/teams/team/add/").status_code == 200  # the link leads somewhere


def test_a_person_in_no_team_is_told_to_ask_a_team_admin(client, django_user_model):
    client.force_login(django_user_model.objects.create_user(username="newbie", password="x" * 12))
    page = client.get("/").content.decode()
    assert "You are in no team yet" in page and "Ask a team admin to add you" in page
    assert "/admin/" not in page.split('id="no-team"')[1].split("</p>")[0]


def test_a_member_of_a_team_without_sandboxes_is_offered_one(client, member, team):
    assert not team.sandboxes.exists()
    client.force_login(member)
    page = client.get("/").content.decode()
    assert 'id="no-sandbox"' in page and 'href="/catalog/sandboxes/new/"' in page
    assert 'name="team"' in client.get("/catalog/sandboxes/new/").content.decode()
