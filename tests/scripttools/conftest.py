"""Fixtures of the script-tool suite: the sample tools and a real Docker engine."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import docker
import pytest

from jazzmine.core.tools.registry import DEFAULT_BASE_IMAGE

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
RSI = FIXTURES / "calculate_rsi"
PRICES = FIXTURES / "summarize_prices"


def rsi_json() -> dict[str, Any]:
    """Return the good calculate_rsi tool.json as a dict to break."""
    return json.loads((RSI / "tool.json").read_text())


def rsi_script() -> str:
    """Return the good calculate_rsi script to break."""
    return (RSI / "script.py").read_text()


def engine() -> docker.DockerClient:
    """Return a client of a live engine, starting one with scripts/ensure-docker.sh if needed."""
    try:
        client = docker.from_env()
        client.ping()
        return client
    except docker.errors.DockerException:
        pass
    done = subprocess.run(["bash", str(REPO / "scripts" / "ensure-docker.sh")],
                          capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        pytest.fail(f"no Docker engine and ensure-docker.sh failed:\n{done.stderr}")
    return docker.from_env()


@pytest.fixture(scope="session")
def docker_client() -> docker.DockerClient:
    return engine()


@pytest.fixture(scope="session")
def base_image(docker_client) -> str:
    """Make sure the debootstrapped base image exists (built once per machine)."""
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "ensure-base-image.sh"), DEFAULT_BASE_IMAGE],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.fail(f"could not make {DEFAULT_BASE_IMAGE}:\n{done.stderr}")
    return DEFAULT_BASE_IMAGE
