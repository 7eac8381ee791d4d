"""Fixtures of the script-tool suite: the sample tools and a real Docker engine."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import docker
import pytest

from jazzmine.core.tools.registry import DEFAULT_BASE_IMAGE
from tests.docker_engine import engine

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
