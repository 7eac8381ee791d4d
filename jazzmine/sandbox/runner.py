"""The one contract of every backend: a runner bound to its sandbox runs requests as events.

Implemented by `DockerOneShot` (a cold container per run), `WarmPool` (a pre-started
container per run) and `BwrapOneShot` (a bubblewrap sandbox per run). Every run ends with
exactly one `exit` event, whatever went wrong.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol

from .bwrap import BwrapRunner
from .docker_runner import DockerRunner
from .events import Event
from .request import RunLimits, RunRequest


class Runner(Protocol):
    """Something that runs requests in sandboxes of one image (or runtime) and limits."""

    backend: str

    def run(self, request: RunRequest) -> AsyncIterator[Event]:
        """Run one request in a sandbox of its own and yield its events as they arrive."""
        ...


def make_runner(
    backend: str,
    target: str | Path,
    limits: RunLimits,
    *,
    docker: DockerRunner | None = None,
    remove_runtime_dir: bool = False,
    allow_unrestricted: bool = False,
) -> Runner:
    """Return a one-shot runner of a sandbox's configured backend; there is no silent fallback.

    `target` is the image (docker) or the staged runtime directory (bwrap); `docker` shares one
    engine connection between runners, `remove_runtime_dir` hands a per-run directory over.
    """
    if backend == "docker":
        engine = docker or DockerRunner(allow_unrestricted=allow_unrestricted)
        return engine.bind(str(target), limits)
    if backend == "bwrap":
        runner = BwrapRunner(allow_unrestricted=allow_unrestricted)
        return runner.bind(Path(target), limits, remove_runtime_dir=remove_runtime_dir)
    raise ValueError(f"unknown sandbox backend {backend!r}: expected 'docker' or 'bwrap'")
