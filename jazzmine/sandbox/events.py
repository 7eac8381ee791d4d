"""The event protocol between a sandbox and the host, and the closed set of ways a run ends."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

EventType = Literal["log", "intermediate", "result", "error", "exit"]
EVENT_TYPES: frozenset[str] = frozenset({"log", "intermediate", "result", "error", "exit"})


class Outcome(StrEnum):
    """How a run (or the build before it) ended; the `outcome` of every final `exit` event."""

    RESULT = "result"
    SCRIPT_ERROR = "script_error"
    TIMEOUT = "timeout"
    MEMORY_KILLED = "memory_killed"
    OUTPUT_LIMIT = "output_limit"
    CONTAINER_CRASH = "container_crash"
    ENGINE_UNAVAILABLE = "engine_unavailable"
    BUILD_FAILED = "build_failed"


class ProtocolError(ValueError):
    """A line from the sandbox is not a valid event."""


@dataclass(frozen=True)
class Event:
    """One numbered event of a run, as the harness (or the runner) reported it."""

    seq: int
    type: EventType
    data: Any = None
    ts: float = field(default_factory=time.time)

    @property
    def is_final(self) -> bool:
        """Tell whether this event ends the run."""
        return self.type == "exit"

    @property
    def outcome(self) -> Outcome | None:
        """Return the outcome of a final event, else None."""
        if self.type != "exit" or not isinstance(self.data, dict):
            return None
        return Outcome(self.data["outcome"])

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-safe form stored and sent to browsers."""
        return {"seq": self.seq, "type": self.type, "data": self.data, "ts": self.ts}

    def to_json(self) -> str:
        """Serialize as one protocol line (without the newline)."""
        return json.dumps(self.to_dict(), ensure_ascii=True, separators=(",", ":"))


def parse_event(line: str | bytes) -> Event:
    """Parse one protocol line, refusing anything that is not a well-formed event."""
    try:
        raw = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"not JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise ProtocolError("an event must be a JSON object")
    seq, type_, ts = raw.get("seq"), raw.get("type"), raw.get("ts")
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise ProtocolError(f"bad seq {seq!r}")
    if type_ not in EVENT_TYPES:
        raise ProtocolError(f"unknown event type {type_!r}")
    if not isinstance(ts, (int, float)) or isinstance(ts, bool):
        raise ProtocolError(f"bad ts {ts!r}")
    return Event(seq=seq, type=type_, data=raw.get("data"), ts=float(ts))


def error_data(kind: Outcome, message: str, **extra: Any) -> dict[str, Any]:
    """Return the data of an `error` event the runner reports (not the script)."""
    return {"kind": kind.value, "message": message, **extra}


def exit_data(outcome: Outcome, message: str, *, backend: str, **extra: Any) -> dict[str, Any]:
    """Return the data of the final `exit` event of a run."""
    return {"outcome": outcome.value, "message": message, "backend": backend, **extra}


def memory_message(memory_mb: int) -> str:
    """Explain a kill by the memory limit in the words the user sees."""
    return f"killed: memory limit of {memory_mb} MiB exceeded (OOMKilled)"
