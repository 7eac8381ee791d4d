"""The relay's side of the host channel: number, check and forward events; decide the end."""

from __future__ import annotations

import os
import sys
from typing import Any

from .failure import error_data
from .process import describe_status, mirror_status, sent_signal, signal_name
from .protocol import HARNESS_PROTOCOL, MAX_DATA_DEPTH, clean, clean_text, data_problem
from .refs import _encode, _now, _os_write


class Relay:
    """The host channel: number, validate and forward the worker's events; end the run."""

    EVENT_TYPES = frozenset({"log", "intermediate", "result", "error"})

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.seq = 0
        self.results = 0
        self.errors = 0
        self.outcome: str | None = None
        self.breach: str | None = None

    def _write(self, payload: dict[str, Any]) -> None:
        data = (_encode(payload) + "\n").encode("ascii")
        view = memoryview(data)
        while view:
            view = view[_os_write(self.fd, view) :]

    def ready(self, tools: list[str]) -> None:
        """Announce that a request can be read."""
        self._write(
            {"type": "ready", "ts": _now(), "pid": os.getpid(), "protocol": HARNESS_PROTOCOL,
             "tools": tools}
        )  # fmt: skip

    def send(self, type_: str, data: Any) -> None:
        """Write one numbered event; the relay's own count, never the worker's."""
        self.seq += 1
        if type_ == "error":
            self.errors += 1
        self._write({"seq": self.seq, "type": type_, "data": data, "ts": _now()})

    def note(self, message: str) -> None:
        """Report something the relay decided, as a log line of the harness."""
        self.send("log", {"message": clean_text(message), "stream": "harness"})

    def accept(self, payload: Any) -> None:
        """Check one message of the worker and forward it, or record why it was refused.

        The worker's process is the script's: whatever it writes may be hostile, and a check
        that raises on it (an unhashable type, data nested past the recursion limit) must
        charge the script, never end the relay as if the sandbox had crashed.
        """
        try:
            self._accept(payload)
        except Exception as exc:
            self.breach = f"a message the harness could not check ({type(exc).__name__})"

    def _accept(self, payload: Any) -> None:
        if not isinstance(payload, dict):
            self.breach = "a message that is not a JSON object"
            return
        type_ = payload.get("type")
        if type_ == "done":
            if self.outcome is None and payload.get("outcome") in ("result", "script_error"):
                self.outcome = payload["outcome"]
            else:
                self.breach = "a second or malformed end of the script"
            return
        if self.outcome is not None:
            self.breach = f"a {clean_text(repr(type_))[:40]} message after the script had ended"
            return
        if not isinstance(type_, str) or type_ not in self.EVENT_TYPES:
            self.breach = f"a message of unknown type {clean_text(repr(type_))[:40]}"
            return
        data = payload.get("data")
        if type_ in ("log", "error"):
            data = clean(data)
        problem = data_problem(data, MAX_DATA_DEPTH + 1)
        if problem is None and type_ == "log" and not _has_message(data):
            problem = "a log without a message"
        if problem is None and type_ == "error" and not isinstance(data, dict):
            problem = "an error that is not an object"
        if problem is None and type_ == "intermediate" and not _has_label(data):
            # The host refuses it too (`events._check_shape`), but as the sandbox's fault.
            problem = "an intermediate event without a string label"
        if problem is not None:
            self.breach = f"a {type_} event whose data breaks the protocol: {problem}"
            return
        if type_ == "result":
            self.results += 1
            if self.results > 1:
                self.breach = "a second result"
                return
        self.send(type_, data)

    def finish(self, status: int) -> None:
        """Decide the run's end from the worker's own end, write `exit` and stop."""
        normal = os.WIFEXITED(status) and os.waitstatus_to_exitcode(status) == 0
        signalled = sent_signal(status)
        if self.breach is not None:
            message = f"the script process broke the event protocol: it sent {self.breach}"
            self.send("error", {"kind": "protocol_error", "exception": "ProtocolError",
                                "line": None, "message": message, "traceback": ""})  # fmt: skip
            outcome = "script_error"
        elif self.outcome == "result" and self.results == 1 and normal:
            outcome = "result"
        elif signalled is not None and self.outcome != "script_error":
            # Stopped by a signal that is not the OOM killer's: the script, a tool or what it
            # started sent it (or the process crashed). Say which; whatever the worker sent
            # before, a result included, the run did not end with one.
            message = (
                f"the script process was stopped by signal {signal_name(signalled)} before "
                "the script ended: the script, one of its tools or a process a tool started "
                "sent it, or the process crashed"
            )
            self.send("error", error_data("ScriptStopped", message))
            outcome = "script_error"
        elif self.outcome is None:
            # The worker ended without saying so (a crash, a kill, os._exit): nothing it
            # printed decides the run. Leave without an exit event, with the worker's own
            # status, so the host judges the sandbox (out of memory, crash) from outside.
            sys.stderr.write(
                f"harness: the script process ended before the script did: "
                f"{describe_status(status)}\n"
            )
            sys.stderr.flush()
            os._exit(mirror_status(status))
        else:
            if self.errors == 0:
                message = "the script did not finish with a result"
                if not normal:
                    message += f" ({describe_status(status)})"
                self.send("error", error_data("ScriptError", message))
            outcome = "script_error"
        self.send("exit", {"outcome": outcome})


def _has_message(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("message"), str)


def _has_label(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("label"), str)
