"""Which process owns the containers it creates, so that what a dead process leaves is found.

A worker names itself once at start (`owner_set`); every container created afterwards carries
its name, boot and deployment. A process that finds containers of an owner that is gone removes
them: only its own deployment's, since another deployment on the same Docker engine may have a
worker of the same name (`worker1@<host>`) that is alive.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

import docker

OWNER_LABEL = "jazzmine.owner"
BOOT_LABEL = "jazzmine.boot"
DEPLOYMENT_LABEL = "jazzmine.deployment"

_owner: dict[str, str] = {}


def owner_set(name: str, boot: str, deployment: str) -> None:
    """Label every container this process creates from now on with its owner, boot and
    deployment."""
    _owner.clear()
    _owner.update({OWNER_LABEL: name, BOOT_LABEL: boot, DEPLOYMENT_LABEL: deployment})


def owner_labels() -> dict[str, str]:
    """Return the owner labels of this process's containers (none before `owner_set`)."""
    return dict(_owner)


def remove_owned(
    client: docker.DockerClient,
    owners: Iterable[str],
    *,
    deployment: str,
    keep_boot: str | None = None,
) -> int:
    """Force-remove one deployment's containers of these owners, except those of one boot;
    return how many. A container naming no deployment is not known to be ours: it stays."""
    wanted = set(owners)
    if not wanted:
        return 0
    removed = 0
    mine = f"{DEPLOYMENT_LABEL}={deployment}"
    for container in client.containers.list(all=True, filters={"label": [OWNER_LABEL, mine]}):
        labels = container.labels or {}
        if labels.get(OWNER_LABEL) not in wanted:
            continue
        if keep_boot is not None and labels.get(BOOT_LABEL) == keep_boot:
            continue
        with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
            container.remove(force=True)
            removed += 1
    return removed
