"""The Docker engine's client, and the one error saying where an engine did not answer."""

from __future__ import annotations

import os
import weakref
from typing import Any

import docker
import docker.errors
import requests.exceptions

ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException, OSError)


class EngineUnavailable(Exception):
    """The Docker engine could not be reached or refused to start a sandbox."""


def engine_unavailable(exc: BaseException) -> EngineUnavailable:
    """Return the error of an engine that did not answer, naming the engine (DOCKER_HOST)."""
    where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    return EngineUnavailable(f"Docker engine unavailable at {where}: {exc}")


def engine_client(**kwargs: Any) -> docker.DockerClient:
    """Connect to the engine of this process's environment (raises EngineUnavailable)."""
    try:
        return docker.from_env(**kwargs)
    except ENGINE_ERRORS as exc:
        raise engine_unavailable(exc) from exc


_REMAPS: weakref.WeakKeyDictionary[docker.DockerClient, bool] = weakref.WeakKeyDictionary()


def engine_remaps_users(client: docker.DockerClient) -> bool:
    """Tell whether an engine runs containers in a remapped user namespace (asked once).

    Such an engine maps container uids 0..65535 only (`identity.REMAPPED_LAST_UID`). Asking
    blocks (the engine's `info`): once known, `engine_remaps_users_known` answers at once.
    """
    found = _REMAPS.get(client)
    if found is None:
        options = client.info().get("SecurityOptions") or []
        found = _REMAPS[client] = any("name=userns" in str(option) for option in options)
    return found


def engine_remaps_users_known(client: docker.DockerClient) -> bool | None:
    """Return what `engine_remaps_users` learnt of an engine, or None before it asked."""
    return _REMAPS.get(client)
