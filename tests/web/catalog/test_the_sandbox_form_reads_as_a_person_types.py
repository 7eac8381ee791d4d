"""The new-sandbox form starts where a newcomer is: their only team chosen, bounds in plain digits.

It offered "---------" for the team of someone in one team (the browser then refused Save with
"Please select an item in the list"), and wrote its bounds as "5.24288e+07" and "1e+06".
"""

from __future__ import annotations

import pytest

from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import membership_set, team_create

pytestmark = pytest.mark.django_db


def test_the_only_team_is_chosen(client, member, team) -> None:
    client.force_login(member)
    html = client.get("/catalog/sandboxes/new/").content.decode()
    assert f'<option value="{team.pk}" selected>{team.name}</option>' in html


def test_someone_in_two_teams_chooses(client, member) -> None:
    other = team_create(name="Other", slug="other")
    membership_set(team=other, user=member, role=Role.MEMBER)
    client.force_login(member)
    html = client.get("/catalog/sandboxes/new/").content.decode()
    assert '<option value="" selected>---------</option>' in html


def test_the_bounds_are_written_in_plain_digits(client, team_admin) -> None:
    client.force_login(team_admin)  # members see "team admins only" there
    html = client.get("/catalog/sandboxes/new/").content.decode()
    assert "between 1000 and 52428800" in html  # max_output_bytes
    assert "between 1 and 1000000" in html  # bash commands and loop iterations
    assert "between 0.05 and 4" in html  # cpus
    assert "e+" not in html
