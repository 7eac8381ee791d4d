"""A bash run's timeline: each builtin call and the end of the script as run events."""

from __future__ import annotations

from typing import Any

from jazzmine.sandbox import Outcome
from jazzmine.sandbox.events import ProtocolError, check_data, parse_json

from .engine import BashCall, BashResult
from .sandbox import TIMEOUT_EXIT


def bash_call_event(call: BashCall) -> dict[str, Any]:
    """Return the timeline event of one builtin call: name, args, exit status and time."""
    status = "ok" if call.exit_status == 0 else f"exit {call.exit_status}"
    return {
        "label": f"$ {call.name} ({status}, {call.duration_ms:g} ms)",
        "data": {
            "name": call.name,
            "args": call.args,
            "exit_status": call.exit_status,
            "duration_ms": call.duration_ms,
            "started_ms": call.started_ms,
            "stdin": call.stdin,
            **({"error": call.error} if call.error else {}),
        },
        "bash_call": call.seq,
    }


# How much of a failed run's stderr (and error) its message quotes: the end, where the why is.
DETAIL_CHARS = 4000


def bash_final_events(result: BashResult) -> list[tuple[str, Any]]:
    """Return the result (and error) and exit events that end a bash run."""

    parsed = _stdout_json(result.stdout.strip())
    data: dict[str, Any] = {
        "stdout": result.stdout,
        "stderr": result.stderr,
        "exit_code": result.exit_code,
        "duration_ms": result.duration_ms,
        "calls": len(result.calls),
        **({"json": parsed} if parsed is not None else {}),
        # bashkit returns no stdout of a script it stopped (a limit, a timeout): what it
        # printed before is gone, which "no output" would hide.
        **({"output_lost": True} if result.error and not result.stdout else {}),
    }
    events: list[tuple[str, Any]] = [("result", data)]
    if result.exit_code == 0 and not result.error:
        outcome, message = Outcome.RESULT, f"exit 0 after {len(result.calls)} tool call(s)"
    else:
        said = (result.error or result.stderr).lower()
        timed_out = result.exit_code == TIMEOUT_EXIT or "timed out" in said or "timeout" in said
        if timed_out:
            outcome = Outcome.TIMEOUT
        elif result.stdout_truncated or result.stderr_truncated:
            outcome = Outcome.OUTPUT_LIMIT
        else:
            outcome = Outcome.SCRIPT_ERROR
        detail = result.stderr.strip()
        if result.error and result.error not in detail:
            # Last, so that the cut below keeps it: it says why (a limit whose line was hidden).
            detail = f"{detail}\n{result.error}".strip()
        if len(detail) > DETAIL_CHARS:
            # From the first whole line of the last DETAIL_CHARS: "eeded: maximum function
            # depth exceeded" read as a word of its own.
            kept = detail[-DETAIL_CHARS:]
            whole = kept.partition("\n")[2]
            detail = "…\n" + (whole or kept)
        message = f"bash exited with {result.exit_code}" + (f": {detail}" if detail else "")
        events.append(("error", {"kind": outcome.value, "message": message}))
    exit_data = {
        "outcome": outcome.value,
        "message": message,
        "backend": "docker",
        "duration_ms": result.duration_ms,
    }
    events.append(("exit", exit_data))
    return events


def _stdout_json(text: str) -> Any:
    """Return stdout as JSON data when it is one value an event can carry, else None.

    Stdout is any text: JSON past the events' bounds (nesting, NaN, integers beyond JSON-safe
    range) stays text, which the page shows as such, never an error.
    """
    if not text:
        return None
    try:
        parsed = parse_json(text)
        check_data(parsed, depth=3)  # inside the result's data, under its "json" key
    except ProtocolError:
        return None
    return parsed
