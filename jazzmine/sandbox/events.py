"""The event protocol between a sandbox and the host, and the closed set of ways a run ends."""

from __future__ import annotations

import json
import math
import re
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
    PROTOCOL_ERROR = "protocol_error"
    CANCELLED = "cancelled"
    WORKER_LOST = "worker_lost"

    @property
    def is_infrastructure(self) -> bool:
        """Tell whether the platform failed, not the script (a retry of the script is pointless)."""
        return self in _INFRASTRUCTURE


_INFRASTRUCTURE = frozenset({Outcome.ENGINE_UNAVAILABLE, Outcome.BUILD_FAILED, Outcome.WORKER_LOST})


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


# Bounds of what the host accepts from a sandbox (the harness checks the same numbers first).
# Integers beyond JSON's safe range overflow the database and lose precision in browsers;
# nesting beyond a fixed depth makes every reader recurse; lines are bounded in bytes.
MAX_SAFE_INT = 2**53 - 1
MAX_EVENT_DEPTH = 64
MAX_LINE_BYTES = 8 * 1024 * 1024
_SURROGATE = re.compile("[\ud800-\udfff]")
_FIELDS = frozenset({"seq", "type", "data", "ts"})


def _refuse_constant(name: str) -> Any:
    raise ProtocolError(f"{name} is not a finite number")


def _checked_int(text: str) -> int:
    # Bounded by length before conversion: a 100 000-digit integer is refused, not parsed.
    if len(text.lstrip("-")) > 16 or not -MAX_SAFE_INT <= int(text) <= MAX_SAFE_INT:
        raise ProtocolError(
            f"integer {text[:24]}{'...' if len(text) > 24 else ''} is outside ±(2**53 - 1)"
        )
    return int(text)


def _checked_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ProtocolError(f"number {text[:24]} is not finite")
    return value


def check_data(value: Any, depth: int = 1) -> None:
    """Refuse JSON data nested too deep or holding strings that are not valid Unicode."""
    stack = [(value, depth)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                raise ProtocolError("a string holds a lone surrogate (invalid Unicode)")
        elif isinstance(item, dict):
            if level > MAX_EVENT_DEPTH:
                raise ProtocolError(f"data nested deeper than {MAX_EVENT_DEPTH} levels")
            for key, child in item.items():
                stack.append((key, level + 1))
                stack.append((child, level + 1))
        elif isinstance(item, list):
            if level > MAX_EVENT_DEPTH:
                raise ProtocolError(f"data nested deeper than {MAX_EVENT_DEPTH} levels")
            stack.extend((child, level + 1) for child in item)


def parse_json(text: str) -> Any:
    """Parse JSON text by the protocol's rules (finite numbers, JSON-safe integers), or refuse it.

    Nesting and strings are checked by `check_data`, where the data sits in its event.
    """
    try:
        return json.loads(
            text,
            parse_constant=_refuse_constant,
            parse_int=_checked_int,
            parse_float=_checked_float,
        )
    except ProtocolError:
        raise
    except RecursionError:
        raise ProtocolError(f"data nested deeper than {MAX_EVENT_DEPTH} levels") from None
    except ValueError as exc:
        raise ProtocolError(f"not JSON: {exc}") from None


def parse_event(line: str | bytes) -> Event:
    """Parse one protocol line, refusing anything that is not a well-formed event."""
    if len(line) > MAX_LINE_BYTES:
        raise ProtocolError(f"a line of {len(line)} bytes (the limit is {MAX_LINE_BYTES})")
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError(f"not UTF-8: {exc}") from None
    raw = parse_json(line)
    if not isinstance(raw, dict):
        raise ProtocolError("an event must be a JSON object")
    extra = set(raw) - _FIELDS
    if extra:
        raise ProtocolError(f"unknown event fields {sorted(extra)[:5]!r}")
    seq, type_, ts = raw.get("seq"), raw.get("type"), raw.get("ts")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise ProtocolError(f"bad seq {seq!r}")
    if type_ not in EVENT_TYPES:
        raise ProtocolError(f"unknown event type {str(type_)[:40]!r}")
    if not isinstance(ts, (int, float)) or isinstance(ts, bool):
        raise ProtocolError(f"bad ts {ts!r}")
    data = raw.get("data")
    check_data(data, depth=2)
    _check_shape(type_, data)
    return Event(seq=seq, type=type_, data=data, ts=float(ts))


def _check_shape(type_: str, data: Any) -> None:
    """Refuse event data the readers of each type could not handle."""
    if type_ in ("log", "error", "exit") and not isinstance(data, dict):
        raise ProtocolError(f"a {type_} event needs an object as data")
    if type_ == "log" and not isinstance(data.get("message"), str):
        raise ProtocolError("a log event needs a string message")
    if type_ == "intermediate" and (
        not isinstance(data, dict) or not isinstance(data.get("label"), str)
    ):
        raise ProtocolError("an intermediate event needs a string label")
    if type_ == "exit" and data.get("outcome") not in (
        Outcome.RESULT.value,
        Outcome.SCRIPT_ERROR.value,
    ):
        raise ProtocolError("an exit from the sandbox may only claim result or script_error")


def error_data(kind: Outcome, message: str, **extra: Any) -> dict[str, Any]:
    """Return the data of an `error` event the runner reports (not the script)."""
    return {"kind": kind.value, "message": message, **extra}


def exit_data(outcome: Outcome, message: str, *, backend: str, **extra: Any) -> dict[str, Any]:
    """Return the data of the final `exit` event of a run."""
    return {"outcome": outcome.value, "message": message, "backend": backend, **extra}


def memory_message(memory_mb: int) -> str:
    """Explain a kill by the memory limit in the words the user sees."""
    return f"killed: memory limit of {memory_mb} MiB exceeded (OOMKilled)"
