"""The worker's side of the event pipe: framed lines, script output and the emit helpers."""

from __future__ import annotations

import json
import math
from typing import Any

from .protocol import (
    MAX_DATA_DEPTH,
    MAX_LINE_BYTES,
    MAX_LOG_CHARS,
    clean,
    clean_text,
    data_problem,
)
from .refs import _encode, _json_loads, _Lock, _os_write


class Channel:
    """The worker's end of the pipe to the relay: token-framed JSON lines, no numbering."""

    def __init__(self, fd: int, token: bytes) -> None:
        self._fd = fd
        self._prefix = token + b" "
        self._lock = _Lock()

    def _write(self, payload: dict[str, Any]) -> None:
        data = self._prefix + (_encode(payload) + "\n").encode("ascii")
        view = memoryview(data)
        with self._lock:
            while view:
                written = _os_write(self._fd, view)
                view = view[written:]

    def fileno(self) -> int:
        """Return the pipe's descriptor (for a forked process to close)."""
        return self._fd

    def ready(self, tools: list[str]) -> None:
        """Tell the relay that the tools are loaded."""
        self._write({"type": "ready", "tools": tools})

    def send(self, type_: str, data: Any) -> None:
        """Report one event; `data` must already be known to be JSON-safe.

        A log text too long for one line goes as consecutive log events, in order: a huge
        `print` is output like any other (the output limit judges it), never a broken line.
        """
        if type_ in ("log", "error"):
            data = clean(data)
        if type_ == "log" and len(data["message"]) > MAX_LOG_CHARS:
            message = data["message"]
            for start in range(0, len(message), MAX_LOG_CHARS):
                piece = message[start : start + MAX_LOG_CHARS]
                self._write({"type": "log", "data": {**data, "message": piece}})
            return
        self._write({"type": type_, "data": data})

    def done(self, outcome: str) -> None:
        """Report how the script ended; the relay still judges it against the worker's exit."""
        self._write({"type": "done", "outcome": outcome})


def _json_default(value: Any) -> Any:
    """Let scripts emit a ToolResponse (or any object with to_dict) as it would be sent."""
    to_dict = getattr(type(value), "to_dict", None)
    if callable(to_dict):
        return to_dict(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_check_encoder = json.JSONEncoder(
    ensure_ascii=True, allow_nan=False, separators=(",", ":"), default=_json_default
).encode


def json_safe(value: Any, helper: str) -> Any:
    """Return `value` as plain JSON data, or raise a TypeError a script author understands."""
    try:
        plain = value if _plain(value) else _json_loads(_check_encoder(value))
        problem = data_problem(plain)
    except (TypeError, ValueError, RecursionError) as exc:
        problem = str(exc)
    if problem is not None:
        raise TypeError(
            f"{helper}() needs JSON-safe data (dicts with string keys, lists, valid strings, "
            f"finite numbers within ±(2**53 - 1), booleans, None, nested at most "
            f"{MAX_DATA_DEPTH} deep); got {type(value).__name__}: {problem}"
        ) from None
    return plain


def _plain(value: Any) -> bool:
    """Tell whether a value is a JSON scalar that needs no round trip."""
    if value is None or isinstance(value, (str, bool, int)):
        return True
    return isinstance(value, float) and math.isfinite(value)


class LogWriter:
    """A text stream that turns every complete line written to it into a `log` event."""

    def __init__(self, channel: Channel, stream: str) -> None:
        self._channel = channel
        self._stream = stream
        self._buffer = ""
        self._lock = _Lock()

    def write(self, text: str) -> int:
        """Buffer text and emit each finished line."""
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        with self._lock:
            self._buffer += text
            *lines, self._buffer = self._buffer.split("\n")
        for line in lines:
            self._channel.send("log", {"message": line, "stream": self._stream})
        return len(text)

    def flush(self) -> None:
        """Emit what is left of an unfinished line."""
        with self._lock:
            rest, self._buffer = self._buffer, ""
        if rest:
            self._channel.send("log", {"message": rest, "stream": self._stream})

    def isatty(self) -> bool:
        """Report that this is not a terminal."""
        return False

    @property
    def encoding(self) -> str:
        """Report the text encoding (some libraries ask)."""
        return "utf-8"


class Emitters:
    """The three emit helpers of a script, bound to one channel."""

    def __init__(self, channel: Channel, stdout: LogWriter) -> None:
        self.channel = channel
        self.stdout = stdout
        self.result_sent = False

    def emit_intermediate(self, label: Any, data: Any = None) -> None:
        """Send a named intermediate value."""
        payload = {"label": clean_text(str(label)), "data": json_safe(data, "emit_intermediate")}
        _check_size(payload, "emit_intermediate")
        self.stdout.flush()
        self.channel.send("intermediate", payload)

    def emit_log(self, message: Any) -> None:
        """Send a log line."""
        self.stdout.flush()
        self.channel.send("log", {"message": str(message), "stream": "emit_log"})

    def emit_result(self, data: Any) -> None:
        """Send the final result (once)."""
        if self.result_sent:
            raise RuntimeError("emit_result() was already called; a script has one result")
        safe = json_safe(data, "emit_result")
        _check_size(safe, "emit_result")
        self.stdout.flush()
        self.channel.send("result", safe)
        # Only once it is on its way: a refused result leaves the script free to try again.
        self.result_sent = True

    def print(self, *args: Any, sep: Any = " ", end: Any = "\n", **_ignored: Any) -> None:
        """Replace print(): the script's output becomes log events."""
        sep = " " if sep is None else str(sep)
        end = "\n" if end is None else str(end)
        self.stdout.write(sep.join(str(a) for a in args) + end)


def _check_size(data: Any, helper: str) -> None:
    size = len(_encode(data))
    if size > MAX_LINE_BYTES - 4096:
        raise ValueError(
            f"{helper}() data is {size} bytes as JSON; one event may carry at most "
            f"{MAX_LINE_BYTES - 4096} bytes"
        )
