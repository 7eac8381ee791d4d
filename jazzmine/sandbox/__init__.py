"""Where LLM-written scripts run: images per sandbox, the harness, runners and a warm pool."""

from __future__ import annotations

from .builder import BuildResult, SandboxBuilder
from .errors import BuildError, SandboxError, UnrestrictedRefused
from .events import Event, Outcome, ProtocolError, parse_event
from .request import RunLimits, RunRequest

__all__ = [
    "BuildError",
    "BuildResult",
    "Event",
    "Outcome",
    "ProtocolError",
    "RunLimits",
    "RunRequest",
    "SandboxBuilder",
    "SandboxError",
    "UnrestrictedRefused",
    "make_runner",
    "parse_event",
]


def make_runner(backend: str, *, allow_unrestricted: bool = False) -> object:
    """Return the runner of a sandbox's configured backend; there is no silent fallback."""
    if backend == "docker":
        from .docker_runner import DockerRunner

        return DockerRunner(allow_unrestricted=allow_unrestricted)
    if backend == "bwrap":
        from .bwrap_runner import BwrapRunner

        return BwrapRunner(allow_unrestricted=allow_unrestricted)
    raise ValueError(f"unknown sandbox backend {backend!r}: expected 'docker' or 'bwrap'")
