"""A live Docker engine for the suites that need one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import docker
import pytest

REPO = Path(__file__).resolve().parents[1]


def engine() -> docker.DockerClient:
    """Return a client of a live engine, starting one with scripts/ensure-docker.sh if needed."""
    try:
        client = docker.from_env()
        client.ping()
        return client
    except docker.errors.DockerException:
        pass
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "ensure-docker.sh")],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"no Docker engine and ensure-docker.sh failed:\n{done.stderr}")
    return docker.from_env()
