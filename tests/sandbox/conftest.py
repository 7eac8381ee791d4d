"""Fixtures of the sandbox suite: one test image per session, runners on the real engine."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from jazzmine.sandbox import RunLimits, SandboxBuilder
from jazzmine.sandbox.containers import RUN_LABEL
from jazzmine.sandbox.docker_runner import DockerRunner
from jazzmine.sandbox.owner import OWNER_LABEL
from tests.waiting import wait_until

from .corpus_tools import CORPUS_SANDBOX, make_wall_registry
from .sample_tools import TEST_SANDBOX, make_registry


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sandbox-cache")


@pytest.fixture(scope="session")
def registry():
    return make_registry()


@pytest.fixture(scope="session")
def image(docker_client, registry, cache_dir) -> str:
    """Build the test sandbox's image once per session (reused across sessions by tag)."""
    return (
        SandboxBuilder(registry, client=docker_client, cache_dir=cache_dir)
        .ensure_image(TEST_SANDBOX)
        .tag
    )


@pytest.fixture(scope="session")
def wall_image(docker_client, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Build the image of the validator corpora's tools, which the walls' tests run against."""
    return (
        SandboxBuilder(
            make_wall_registry(),
            client=docker_client,
            cache_dir=tmp_path_factory.mktemp("wall-cache"),
        )
        .ensure_image(CORPUS_SANDBOX)
        .tag
    )


@pytest.fixture
def limits() -> RunLimits:
    return RunLimits(memory_mb=128, pids_limit=64, timeout_seconds=10, max_output_bytes=200_000)


@pytest.fixture
def runner(docker_client) -> DockerRunner:
    return DockerRunner(docker_client)


@pytest.fixture
def hostile_runner(docker_client) -> DockerRunner:
    """A runner that accepts unrestricted scripts: only to prove the container walls hold."""
    return DockerRunner(docker_client, allow_unrestricted=True)


def leftover_containers(client: docker.DockerClient) -> list[str]:
    """Return the run containers this process made (a worker process labels its own)."""
    # Another process's container may be removed between the listing and its inspection.
    containers = client.containers.list(all=True, filters={"label": RUN_LABEL}, ignore_removed=True)
    return [c.name for c in containers if OWNER_LABEL not in (c.labels or {})]


@pytest.fixture(autouse=True)
def no_container_left(request):
    """After every docker test, assert that no run container it made survived.

    Containers that existed before the test (another suite's, another process's) are not its
    own; removal is asynchronous in the engine, so give it a few seconds before judging.
    """
    docker_test = request.node.get_closest_marker("docker") is not None
    client = request.getfixturevalue("docker_client") if docker_test else None
    before = set(leftover_containers(client)) if client is not None else set()
    yield
    if client is None:
        return

    def left() -> list[str]:
        return [name for name in leftover_containers(client) if name not in before]

    wait_until(
        lambda: not left(), timeout=5, interval=0.2, message=lambda: f"containers left: {left()}"
    )
