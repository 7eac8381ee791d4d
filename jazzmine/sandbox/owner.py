"""Which process owns the containers it creates, so that what a dead process leaves is found.

A worker names itself once at start (`owner_set`); every container created afterwards carries
its name and boot. A process that finds containers of an owner that is gone removes them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

import docker

OWNER_LABEL = "jazzmine.owner"
BOOT_LABEL = "jazzmine.boot"

_owner: dict[str, str] = {}


def owner_set(name: str, boot: str) -> None:
    """Label every container this process creates from now on with its owner and boot."""
    _owner.clear()
    _owner.update({OWNER_LABEL: name, BOOT_LABEL: boot})


def owner_labels() -> dict[str, str]:
    """Return the owner labels of this process's containers (none before `owner_set`)."""
    return dict(_owner)


def remove_owned(
    client: docker.DockerClient, owners: Iterable[str], *, keep_boot: str | None = None
) -> int:
    """Force-remove the containers of these owners, except those of one boot; return how many."""
    wanted = set(owners)
    if not wanted:
        return 0
    removed = 0
    for container in client.containers.list(all=True, filters={"label": OWNER_LABEL}):
        labels = container.labels or {}
        if labels.get(OWNER_LABEL) not in wanted:
            continue
        if keep_boot is not None and labels.get(BOOT_LABEL) == keep_boot:
            continue
        with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
            container.remove(force=True)
            removed += 1
    return removed
