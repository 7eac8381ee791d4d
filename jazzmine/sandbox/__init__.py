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
    "parse_event",
]
