"""A worker's sweep removes the containers of its own deployment's dead workers, none other.

Two deployments may share one Docker engine, and their workers have the same names
(`worker1@<host>` in the Procfile). Before, a worker of one that started, or swept the
containers of a worker its database counted as dead, also removed the running containers of
the other deployment's worker of that name.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import docker
import pytest

from jazzmine.sandbox import owner
from jazzmine.sandbox.owner import (
    BOOT_LABEL,
    DEPLOYMENT_LABEL,
    OWNER_LABEL,
    owner_labels,
    owner_set,
    remove_owned,
)

pytestmark = pytest.mark.docker

WORKER = "worker1@shop-host"


@pytest.fixture
def made(docker_client, image) -> Iterator[dict[str, docker.models.containers.Container]]:
    """Containers of `WORKER`, labelled as a worker of each deployment (or none) makes them."""
    mark = uuid.uuid4().hex  # this test's containers only, whatever else runs on the engine
    spellings: dict[str, dict[str, str]] = {
        "ours, earlier boot": {DEPLOYMENT_LABEL: "shop-prod", BOOT_LABEL: "old"},
        "ours, this boot": {DEPLOYMENT_LABEL: "shop-prod", BOOT_LABEL: "now"},
        "staging's": {DEPLOYMENT_LABEL: "shop-staging", BOOT_LABEL: "old"},
        "a prefix of ours": {DEPLOYMENT_LABEL: "shop-prod-2", BOOT_LABEL: "old"},
        "ours, spelt in capitals": {DEPLOYMENT_LABEL: "SHOP-PROD", BOOT_LABEL: "old"},
        "no deployment named": {BOOT_LABEL: "old"},
        "an empty deployment": {DEPLOYMENT_LABEL: "", BOOT_LABEL: "old"},
    }
    containers = {
        what: docker_client.containers.create(
            image,
            ["sleep", "60"],
            labels={OWNER_LABEL: WORKER, "jazzmine.test": mark, **labels},
            network_mode="none",
        )
        for what, labels in spellings.items()
    }
    yield containers
    for container in docker_client.containers.list(
        all=True, filters={"label": f"jazzmine.test={mark}"}
    ):
        container.remove(force=True)


def test_a_sweep_removes_only_its_own_deployments_containers(docker_client, made):
    removed = remove_owned(docker_client, [WORKER], deployment="shop-prod", keep_boot="now")
    left = {
        what
        for what, container in made.items()
        if container.id in {c.id for c in docker_client.containers.list(all=True)}
    }
    assert removed == 1
    assert left == set(made) - {"ours, earlier boot"}


def test_every_container_a_worker_makes_names_its_deployment(monkeypatch):
    monkeypatch.setattr(owner, "_owner", {})  # this process's own labels stay as they were
    owner_set(WORKER, "now", "shop-prod")
    assert owner_labels() == {OWNER_LABEL: WORKER, BOOT_LABEL: "now", DEPLOYMENT_LABEL: "shop-prod"}
