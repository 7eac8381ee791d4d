"""Run a test's scripts on each backend the sandbox suite covers: a Docker container, then bwrap.

A test module imports `sandbox` (a fixture, used by name) and names it in `__all__`; the
sandbox runs from the module's `image` (the conftest's, unless the module builds its own)
and `runtime_dir` (bwrap_support's, likewise).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import docker
import pytest

from jazzmine.core.tools import ToolRegistry
from jazzmine.sandbox import Event, RunLimits, RunRequest, SandboxBuilder
from jazzmine.sandbox.bwrap import BwrapRunner
from jazzmine.sandbox.docker_runner import DockerRunner

from .bwrap_support import requires_bwrap
from .helpers import collect


class Sandbox(NamedTuple):
    """A backend and what it runs from: an image (Docker) or a runtime directory (bwrap)."""

    backend: str
    where: str | Path
    client: docker.DockerClient | None = None

    async def run(
        self, script: str, limits: RunLimits, *, unrestricted: bool = False
    ) -> list[Event]:
        """Run one script in a fresh sandbox and return its events."""
        request = RunRequest(script=script, unrestricted=unrestricted)
        if self.backend == "docker":
            assert self.client is not None
            runner = DockerRunner(self.client, allow_unrestricted=unrestricted)
            return await collect(runner.bind(str(self.where), limits).run(request))
        bwrap = BwrapRunner(allow_unrestricted=unrestricted)
        return await collect(bwrap.bind(Path(self.where), limits).run(request))


@pytest.fixture(
    params=[
        pytest.param("docker", marks=pytest.mark.docker),
        pytest.param("bwrap", marks=requires_bwrap),
    ]
)
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    """Each test once in a container, once in bwrap (skipped where bwrap is unavailable)."""
    if request.param == "docker":
        image = request.getfixturevalue("image")
        return Sandbox("docker", image, request.getfixturevalue("docker_client"))
    return Sandbox("bwrap", request.getfixturevalue("runtime_dir"))


def docker_image(
    client: docker.DockerClient, registry: ToolRegistry, sandbox: str, cache: Path
) -> str:
    """Build (or find by its tag) the image of one sandbox of `registry`."""
    return SandboxBuilder(registry, client=client, cache_dir=cache).ensure_image(sandbox).tag


def bwrap_runtime(registry: ToolRegistry, sandbox: str) -> Iterator[Path]:
    """Stage the runtime directory of one sandbox of `registry` for bwrap; remove it after."""
    # As bwrap_support's: outside pytest's 0700 tmp tree (as root the sandbox runs as
    # nobody), and not named as a run directory (jazzmine-bwrap-*), which staging may sweep.
    root = Path(tempfile.mkdtemp(prefix="jazzmine-suite-bwrap-"))
    root.chmod(0o755)
    SandboxBuilder(registry, cache_dir=root / "cache").stage(sandbox, root / "runtime")
    yield root / "runtime"
    shutil.rmtree(root, ignore_errors=True)
