"""Fixtures for catalog tests: a team, its members, a sandbox and tools from the demo module."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from jazzmine_web.catalog.importer import SourceFile, source_file_from_path
from jazzmine_web.catalog.services import sandbox_create, tools_import
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import membership_set, team_create

DEMO = Path(settings.BASE_DIR) / "demo" / "ecommerce.py"


def source_file(name: str, text: str | bytes) -> SourceFile:
    data = text.encode() if isinstance(text, str) else text
    return SourceFile(name=name, size=len(data), data=data)


@pytest.fixture
def team(db):
    return team_create(name="Shop", slug="shop")


@pytest.fixture
def member(team, user):
    membership_set(team=team, user=user, role=Role.MEMBER)
    return user


@pytest.fixture
def team_admin(team, django_user_model):
    admin = django_user_model.objects.create_user(username="grace", password="x" * 12)
    membership_set(team=team, user=admin, role=Role.ADMIN)
    return admin


@pytest.fixture
def outsider(django_user_model):
    return django_user_model.objects.create_user(username="mallory", password="x" * 12)


@pytest.fixture
def ecommerce(team, user):
    tools_import(team=team, files=[source_file_from_path(DEMO)], author=user)
    return team.sandboxes.get(name="ecommerce")


@pytest.fixture
def empty_sandbox(team):
    return sandbox_create(team=team, name="scratch")
