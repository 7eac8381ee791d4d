from __future__ import annotations

import pytest

from jazzmine_web.teams.models import Role
from jazzmine_web.teams.selectors import teams_for_user, user_has_team_role
from jazzmine_web.teams.services import membership_remove, membership_set, team_create

pytestmark = pytest.mark.django_db


def test_each_role_includes_the_ones_below_it(user) -> None:
    team = team_create(name="Shop")
    membership_set(team=team, user=user, role=Role.REVIEWER)
    assert user_has_team_role(user=user, team=team, role=Role.MEMBER)
    assert user_has_team_role(user=user, team=team, role=Role.REVIEWER)
    assert not user_has_team_role(user=user, team=team, role=Role.ADMIN)
    membership_set(team=team, user=user, role=Role.ADMIN)
    assert user_has_team_role(user=user, team=team, role=Role.REVIEWER)


def test_people_outside_a_team_have_no_role_in_it(user) -> None:
    team = team_create(name="Shop")
    assert not user_has_team_role(user=user, team=team)
    membership_set(team=team, user=user)
    assert list(teams_for_user(user)) == [team]
    membership_remove(team=team, user=user)
    assert not teams_for_user(user).exists()
