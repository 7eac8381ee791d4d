"""Fixtures of the web suites: a team, its members, the demo sandbox, the session's worker."""

from __future__ import annotations

import pytest

from jazzmine_web.catalog.importer import source_file_from_path
from jazzmine_web.catalog.services import sandbox_create, tools_import
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import membership_set, team_create
from tests.web.helpers import DEMO, GRACE, accept_code, teammate


@pytest.fixture
def team(db):
    return team_create(name="Shop", slug="shop")


@pytest.fixture
def member(team, user):
    membership_set(team=team, user=user, role=Role.MEMBER)
    return user


@pytest.fixture
def team_admin(team):
    return teammate(team, Role.ADMIN)


@pytest.fixture
def admin(team):
    """A team admin named apart from the teammate tests add (`grace`)."""
    return teammate(team, Role.ADMIN, username="root_admin")


@pytest.fixture
def outsider(django_user_model):
    return django_user_model.objects.create_user(username="mallory", password="x" * 12)


@pytest.fixture
def ecommerce(team, user):
    tools_import(team=team, files=[source_file_from_path(DEMO)], author=user)
    sandbox = team.sandboxes.get(name="ecommerce")
    accept_code(sandbox)  # the demo, as `seed_demo` makes it: its code accepted by its admin
    return sandbox


@pytest.fixture
def empty_sandbox(team):
    return sandbox_create(team=team, name="scratch")


@pytest.fixture
def embedded_demo(settings):
    """Seed the demo as on the embedded default, with the passwords the README prints.

    On a shared database (the suite's PostgreSQL run) `seed_demo` refuses those passwords.
    """
    settings.SHARED_DATABASE = False


@pytest.fixture
def worker(celery_worker, transactional_db):
    """Give the test the session's running Celery worker (a separate process).

    Afterwards the runs the test left running are cancelled, so that the worker is free
    for the next test (their rows are about to be flushed).
    """
    from tests.workers import Workers, runs_stop_unfinished, worker_idle_wait

    yield Workers(celery_worker)
    runs_stop_unfinished()
    worker_idle_wait()


@pytest.fixture
def graced(celery_workers):
    """A worker of its own, started with a short grace (GRACE), stopped by the test."""
    yield celery_workers.running({"JAZZMINE_WORKER_GRACE_SECONDS": str(GRACE)})
    celery_workers.stop()
