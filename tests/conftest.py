"""Fixtures shared by every suite: pytest finds them here, so no conftest imports another's."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import TransactionTestCase

from tests.database import PoolHolders, flush_again_after_a_deadlock

REPO = Path(__file__).resolve().parents[1]


# PostgreSQL can pick a test's final flush as a deadlock victim (tests/database.py).
TransactionTestCase._fixture_teardown = flush_again_after_a_deadlock(
    TransactionTestCase._fixture_teardown
)


POOL_HOLDERS = PoolHolders()
POOL_HOLDERS.install()


@pytest.fixture(autouse=True)
def _pool_connections_of_ended_threads_returned():
    """Give the pool back what a test's ended threads held (PostgreSQL; `PoolHolders`)."""
    yield
    POOL_HOLDERS.return_what_ended_threads_held()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Hash test passwords cheaply: PBKDF2's million rounds cost 1.5 s a user on this machine."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="session")
def _sqlite_companions_removed():
    """Remove the SQLite test database's WAL files once Django has dropped the database.

    Django deletes the database file only; its `-wal` and `-shm` files stay behind whenever a
    worker or web process of the session still had it open, one pair per test session.
    """
    yield
    from django.conf import settings

    name = str(settings.DATABASES["default"].get("TEST", {}).get("NAME") or "")
    if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3") and name:
        for suffix in ("-wal", "-shm"):
            Path(name + suffix).unlink(missing_ok=True)


@pytest.fixture(scope="session")
def django_db_setup(_sqlite_companions_removed, django_db_setup, django_db_blocker):
    """pytest-django's test database, emptied of sessions before it is dropped.

    PostgreSQL refuses to drop a database that has sessions, and a session's threads can end
    holding one (a pool keeps `min_size` open; an executor thread keeps what it checked out):
    every such session left its test database behind.
    """
    yield
    from django.db import connections

    with django_db_blocker.unblock():
        for connection in connections.all(initialized_only=True):
            if connection.vendor != "postgresql":
                continue
            if connection.pool is not None:
                connection.close_pool()
            with connection._nodb_cursor() as cursor:
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = %s AND pid <> pg_backend_pid()",
                    [connection.settings_dict["NAME"]],
                )


@pytest.fixture(scope="session")
def celery_workers(django_db_setup, tmp_path_factory):
    """The session's real Celery worker process (on the test database), started on demand."""
    from django.conf import settings

    from tests.workers import SessionWorkers, database_url_of

    workers = SessionWorkers(
        database_url=database_url_of(settings.DATABASES["default"]),
        log_dir=tmp_path_factory.mktemp("workers"),
        name=f"test-{os.getpid()}@%h",
    )
    yield workers
    workers.stop()


@pytest.fixture
def celery_worker(celery_workers, request):
    """Return a running worker with the embedded settings."""
    worker = celery_workers.running()
    # Where this test's part of the worker's log starts: a failure shows it (below).
    request.node.stash[WORKER_LOG] = (worker.log_path, _size(worker.log_path))
    return worker


WORKER_LOG = pytest.StashKey[tuple[Path, int]]()
WORKER_LOG_SHOWN = 20_000  # characters: the end of what the worker said during the test


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Show what the session's worker logged during a test that failed.

    The worker is a process of its own: its log sits in pytest's temporary directory, which
    the next sessions rotate away, and a failure that happens once in a while (a race) was
    then left with nothing to read.
    """
    report = yield
    start = item.stash.get(WORKER_LOG, None)
    if start is not None and report.failed and call.when == "call":
        path, offset = start
        with contextlib.suppress(OSError), path.open("rb") as log:
            log.seek(offset)
            said = log.read().decode(errors="replace")
            report.sections.append(("worker log (this test's part)", said[-WORKER_LOG_SHOWN:]))
    return report


@pytest.fixture(scope="session")
def docker_client():
    """A client of the machine's Docker engine (started if it is not running)."""
    from tests.docker_engine import engine

    return engine()


@pytest.fixture(scope="session")
def base_image(docker_client) -> str:
    """Make sure the debootstrapped base image exists (built once per machine)."""
    from jazzmine.core.tools.registry import DEFAULT_BASE_IMAGE

    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "ensure-base-image.sh"), DEFAULT_BASE_IMAGE],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.fail(f"could not make {DEFAULT_BASE_IMAGE}:\n{done.stderr}")
    return DEFAULT_BASE_IMAGE


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user(username="ada", password="correct horse battery")


@pytest.fixture
def logged_in(client, user):
    client.force_login(user)
    return client


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the browser tests last.

    Playwright's sync API keeps an event loop running on the main thread for as long as its
    browser lives (a session fixture), and pytest-asyncio cannot start its own loop beside it.
    """
    items.sort(key=lambda item: item.get_closest_marker("e2e") is not None)


def dead_sessions_deployments(client: Any) -> list[str]:
    """Return the key prefixes of the images of test sessions whose process is gone (killed
    before their own clean-up): each session files its images under `test-<pid>`."""
    from jazzmine.sandbox.builder import IMAGE_KEY_LABEL

    pids = set()
    for image in client.api.images(filters={"label": IMAGE_KEY_LABEL}):
        found = re.match(r"test-(\d+)-", (image.get("Labels") or {}).get(IMAGE_KEY_LABEL, ""))
        if found:
            pids.add(int(found.group(1)))
    return [f"test-{pid}-" for pid in sorted(pids) if not pid_alive(pid)]


# Deployments tests name for the sandbox networks they make (`tests/sandbox`), beside the
# session's own; "" is a network made with no worker's deployment set.
TEST_DEPLOYMENTS = frozenset({"", "first-deployment", "second-deployment", "changing-deployment"})


def test_deployment_ended(own: str) -> Callable[[str], bool]:
    """Tell the deployments whose sandbox networks a session ending may remove: its own, its
    fixtures' (`own-...`), the tests' named ones, and those of test sessions that are gone."""

    def ended(deployment: str) -> bool:
        if deployment in TEST_DEPLOYMENTS or deployment == own:
            return True
        if deployment.startswith(f"{own}-"):
            return True
        found = re.fullmatch(r"test-(\d+)(?:-.*)?", deployment)
        return found is not None and not pid_alive(int(found.group(1)))

    return ended


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's
    return True


def deployment_containers_remove(client: Any, deployments: list[str]) -> int:
    """Remove the containers of these test deployments (a name, or a prefix ending in "-",
    which covers the session's own and its fixtures'); return how many went."""
    removed = 0
    for container in client.containers.list(
        all=True, filters={"label": "jazzmine.deployment"}, ignore_removed=True
    ):
        label = (container.labels or {}).get("jazzmine.deployment", "")
        names = {d.rstrip("-") for d in deployments}
        if label in names or any(label.startswith(f"{name}-") for name in names):
            with contextlib.suppress(Exception):
                container.remove(force=True)
                removed += 1
    return removed


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Remove the sandbox images the tests' deployment made, those left without a tag, and the
    session's Redis keys.

    Every test sandbox's images are filed under the tests' deployment name (its key label),
    tagged or not: kept, they piled up run after run on one engine (thousands, after a few
    runs), and listing a sandbox's images, which a page does, slowed past a second. Tests
    remove their images by force, and an image a pool's container still used then stays,
    untagged. Here every fixture is torn down (the workers and their pools are gone), so they
    can go: only images the builder labelled, none a container uses (the engine's own rule),
    no other deployment's, and nothing at all if no engine answers (no test made any).
    """
    import docker
    import docker.errors
    from django.conf import settings

    from jazzmine.sandbox.builder import deployment_images_remove
    from jazzmine.sandbox.egress import egress_networks_remove

    try:
        client = docker.from_env(timeout=60)
        dead = dead_sessions_deployments(client)
        # First any container the session's workers left (one stopped without removing its
        # pool's, under load): it pins its image, and no later session owns its label.
        deployment_containers_remove(client, [settings.JAZZMINE_DEPLOYMENT, *dead])
        deployment_images_remove(client, f"{settings.JAZZMINE_DEPLOYMENT}-")
        for prefix in dead:
            deployment_images_remove(client, prefix)
        client.images.prune(filters={"dangling": True, "label": "jazzmine.sandbox"})
        # And their sandbox networks: one a session, each holding one of the engine's
        # address pools for good, until some thirty sessions later none could be made.
        egress_networks_remove(client, test_deployment_ended(settings.JAZZMINE_DEPLOYMENT))
    except docker.errors.DockerException:
        pass
    # And the session's Redis namespace (kombu's bindings), if its Redis answers.
    from tests.workers import redis_namespace_clear

    with contextlib.suppress(Exception):
        redis_namespace_clear(settings.JAZZMINE_REDIS_URL, settings.JAZZMINE_REDIS_PREFIX)
