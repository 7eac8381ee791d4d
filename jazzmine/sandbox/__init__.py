"""Where LLM-written scripts run: images per sandbox, the harness, runners and a warm pool."""

from __future__ import annotations

from .builder import BuildResult, SandboxBuilder
from .errors import BuildError, SandboxError, UnrestrictedRefused
from .events import Event, Outcome, ProtocolError, parse_event
from .request import RunLimits, RunRequest
from .runner import Runner, make_runner

__all__ = [
    "BuildError",
    "BuildResult",
    "Event",
    "Outcome",
    "ProtocolError",
    "RunLimits",
    "RunRequest",
    "Runner",
    "SandboxBuilder",
    "SandboxError",
    "UnrestrictedRefused",
    "make_runner",
    "parse_event",
]
