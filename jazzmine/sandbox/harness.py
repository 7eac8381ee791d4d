"""Run one LLM-written script inside a sandbox and report what happens as JSON event lines.

Stdlib-only: this file is copied into every sandbox image (and bwrap runtime directory) next to
`jazzmine/core/tools/safety.py` and `types.py`. Protocol, one JSON object a line on the
original stdout:

    {"type": "ready", ...}                         once the tools are loaded (before any request)
    {"seq": n, "type": "log"|"intermediate"|"result"|"error"|"exit", "data": ..., "ts": float}

The harness reads exactly ONE request line from stdin, runs it, ends with an `exit` event and
terminates: a process is never reused for a second script.
"""

from __future__ import annotations

import asyncio
import builtins
import datetime
import inspect
import json
import math
import os
import re
import sys
import threading
import time
import traceback
import types
from typing import Any

HARNESS_PROTOCOL = 1
SCRIPT_FILENAME = "<script>"
# Set by the runner only when it was created with allow_unrestricted=True (tests of the
# container walls); a request alone can never lift the restricted builtins.
UNRESTRICTED_ENV = "JAZZMINE_HARNESS_ALLOW_UNRESTRICTED"

# Private references taken before any script or tool code runs: a script that rebinds
# `json.dumps` or `time.time` must not be able to break or forge the channel.
_os_write = os.write
_now = time.time
_encode = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode
_Lock = threading.Lock
_isawaitable = inspect.isawaitable
_extract_tb = traceback.extract_tb
_format_exception = traceback.format_exception
_json_loads = json.loads


class Channel:
    """Write protocol events, numbered and flushed, to a private file descriptor."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._seq = 0
        self._lock = _Lock()
        self._closed = False

    def _write(self, payload: dict[str, Any]) -> None:
        data = (_encode(payload) + "\n").encode("utf-8")
        view = memoryview(data)
        while view:
            written = _os_write(self._fd, view)
            view = view[written:]

    def ready(self, tools: list[str]) -> None:
        """Announce that the tools are loaded and a request can be read."""
        self._write(
            {"type": "ready", "ts": _now(), "pid": os.getpid(), "protocol": HARNESS_PROTOCOL,
             "tools": tools}
        )  # fmt: skip

    def send(self, type_: str, data: Any) -> None:
        """Write one event; `data` must already be known to be JSON-safe."""
        with self._lock:
            if self._closed:
                return
            self._seq += 1
            self._write({"seq": self._seq, "type": type_, "data": data, "ts": _now()})
            if type_ == "exit":
                self._closed = True


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
        return _json_loads(_check_encoder(value)) if not _plain(value) else value
    except (TypeError, ValueError, RecursionError) as exc:
        raise TypeError(
            f"{helper}() needs JSON-safe data (dicts with string keys, lists, strings, finite "
            f"numbers, booleans, None); got {type(value).__name__}: {exc}"
        ) from None


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
        self.stdout.flush()
        self.channel.send(
            "intermediate", {"label": str(label), "data": json_safe(data, "emit_intermediate")}
        )

    def emit_log(self, message: Any) -> None:
        """Send a log line."""
        self.stdout.flush()
        self.channel.send("log", {"message": str(message), "stream": "emit_log"})

    def emit_result(self, data: Any) -> None:
        """Send the final result (once)."""
        if self.result_sent:
            raise RuntimeError("emit_result() was already called; a script has one result")
        safe = json_safe(data, "emit_result")
        self.stdout.flush()
        self.result_sent = True
        self.channel.send("result", safe)

    def print(self, *args: Any, sep: Any = " ", end: Any = "\n", **_ignored: Any) -> None:
        """Replace print(): the script's output becomes log events."""
        sep = " " if sep is None else str(sep)
        end = "\n" if end is None else str(end)
        self.stdout.write(sep.join(str(a) for a in args) + end)


def _safe_name(name: Any, forbidden: frozenset[str]) -> str:
    if not isinstance(name, str):
        raise TypeError("attribute name must be a string")
    if name.startswith("_") or name in forbidden:
        raise AttributeError(f"attribute {name!r} is not available in the sandbox")
    return name


def restricted_builtins(safety: Any, emitters: Emitters) -> dict[str, Any]:
    """Build the builtins of a script from the shared safe list, with guarded getattr."""
    names = safety.runtime_names()
    table = {n: getattr(builtins, n) for n in names if hasattr(builtins, n)}
    forbidden = frozenset(safety.FORBIDDEN_ATTRIBUTES)
    real_getattr, real_hasattr = builtins.getattr, builtins.hasattr

    def guarded_getattr(obj: Any, name: Any, *default: Any) -> Any:
        return real_getattr(obj, _safe_name(name, forbidden), *default)

    def guarded_hasattr(obj: Any, name: Any) -> bool:
        try:
            return real_hasattr(obj, _safe_name(name, forbidden))
        except AttributeError:
            return False

    if "getattr" in table:
        table["getattr"] = guarded_getattr
    if "hasattr" in table:
        table["hasattr"] = guarded_hasattr
    table["print"] = emitters.print
    table["NotImplemented"] = NotImplemented
    return table


def module_views(safety: Any) -> dict[str, types.SimpleNamespace]:
    """Give the script copies of the pre-imported modules holding only the allowed names."""
    real = {"json": json, "time": time, "math": math, "re": re, "datetime": datetime}
    views = {}
    for name, allowed in safety.PREIMPORTED_MODULES.items():
        module = real[name]
        attrs = {a: getattr(module, a) for a in sorted(allowed) if hasattr(module, a)}
        # A namespace, not the module: rebinding `json.dumps` only changes the script's copy.
        views[name] = types.SimpleNamespace(**attrs)
    return views


class ToolBox:
    """Load the teleported tool sources and expose each as a plain, never-raising function."""

    def __init__(self, root: str, tool_types: Any) -> None:
        self.root = root
        self.types = tool_types
        self.functions: dict[str, Any] = {}
        self.files: dict[str, str] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        manifest_path = os.path.join(root, "manifest.json")
        if not os.path.exists(manifest_path):
            return
        with open(manifest_path, encoding="utf-8") as handle:
            manifest = json.load(handle)
        for entry in manifest.get("tools", []):
            self.functions[entry["name"]] = self._load(entry)

    def _load(self, entry: dict[str, Any]) -> Any:
        name, path = entry["name"], os.path.join(self.root, entry["file"])
        self.files[path] = name
        namespace: dict[str, Any] = {
            "__name__": f"jazzmine_tool_{name}",
            "__file__": path,
            "__builtins__": builtins,
            "ToolResponse": self.types.ToolResponse,
            "ToolParameter": self.types.ToolParameter,
        }
        try:
            with open(path, encoding="utf-8") as handle:
                exec(compile(handle.read(), path, "exec"), namespace)
            function = namespace[entry["function"]]
        except BaseException as exc:  # a broken tool must not take the harness down
            return self._broken(name, f"could not be loaded: {type(exc).__name__}: {exc}")
        return self._wrap(name, function)

    def _failure(self, message: str) -> Any:
        return self.types.ToolResponse(success=False, message=message)

    def _broken(self, name: str, why: str) -> Any:
        def broken(*_args: Any, **_kwargs: Any) -> Any:
            return self._failure(f"Tool {name!r} {why}")

        broken.__name__ = name
        return broken

    def _wrap(self, name: str, function: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                value = function(*args, **kwargs)
                if _isawaitable(value):
                    value = self._run(value)
                return value
            except BaseException as exc:  # includes SystemExit from a tool: still a response
                return self._failure(f"Tool {name!r} raised {type(exc).__name__}: {exc}")

        call.__name__ = name
        call.__doc__ = getattr(function, "__doc__", None)
        return call

    def _run(self, awaitable: Any) -> Any:
        # One private loop for all async tools of the run, created lazily.
        if self._loop is None:
            self._loop = asyncio.new_event_loop()

        async def wrapper() -> Any:
            return await awaitable

        return self._loop.run_until_complete(wrapper())


class ScriptFailure:
    """Explain a script's exception with line numbers of the body the LLM wrote."""

    def __init__(self, script: str, body_offset: int, tool_files: dict[str, str]) -> None:
        self.lines = script.splitlines()
        self.offset = body_offset
        self.tool_files = tool_files

    def _code(self, assembled_line: int) -> str:
        if 1 <= assembled_line <= len(self.lines):
            return self.lines[assembled_line - 1].strip()
        return ""

    def syntax(self, exc: SyntaxError) -> dict[str, Any]:
        """Describe a script that does not compile."""
        line = (exc.lineno or 0) - self.offset
        code = self._code(exc.lineno or 0)
        message = f"SyntaxError at line {line} of the script: {exc.msg}"
        if code:
            message += f"\n    {code}"
        return error_data("SyntaxError", message, line=line, trace=message)

    def runtime(self, exc: BaseException) -> dict[str, Any]:
        """Describe an exception raised while the script ran."""
        frames = ["Traceback (most recent call last):"]
        last_line: int | None = None
        last_code = ""
        for frame in _extract_tb(exc.__traceback__):
            if frame.filename == SCRIPT_FILENAME:
                line = (frame.lineno or 0) - self.offset
                where = "the script" if frame.name == "<module>" else f"{frame.name}()"
                code = self._code(frame.lineno or 0)
                frames.append(f"  Line {line}, in {where}")
                if code:
                    frames.append(f"    {code}")
                last_line, last_code = line, code
            elif frame.filename in self.tool_files:
                frames.append(
                    f"  Tool {self.tool_files[frame.filename]!r}, line {frame.lineno}, "
                    f"in {frame.name}()"
                )
        summary = _format_exception(type(exc), exc, None)[-1].strip()
        frames.append(summary)
        message = summary + _hint(exc)
        if last_line is not None:
            message += f" (line {last_line} of the script"
            message += f": {last_code})" if last_code else ")"
        return error_data(type(exc).__name__, message, line=last_line, trace="\n".join(frames))


def error_data(
    exception: str, message: str, *, line: int | None = None, trace: str = ""
) -> dict[str, Any]:
    """Return the data of a script-error event."""
    return {
        "kind": "script_error",
        "exception": exception,
        "line": line,
        "message": message,
        "traceback": trace,
    }


def _hint(exc: BaseException) -> str:
    """Add a sentence for the mistakes scripts make most often in the sandbox."""
    if isinstance(exc, ImportError) and "__import__" in str(exc):
        return (
            "; imports are not allowed in the sandbox: json, time, math, re and datetime are "
            "already available"
        )
    if isinstance(exc, NameError):
        return "; only the listed tools, helpers, modules and safe builtins exist in the sandbox"
    if isinstance(exc, MemoryError):
        return "; the script ran out of memory"
    return ""


def _execute(
    request: dict[str, Any],
    channel: Channel,
    safety: Any,
    tool_types: Any,
    toolbox: ToolBox,
    emitters: Emitters,
    stdout: LogWriter,
    stderr: LogWriter,
) -> str:
    script = request.get("script")
    body_offset = int(request.get("body_offset") or 0)
    if not isinstance(script, str):
        channel.send("error", error_data("BadRequest", "The run request has no script text"))
        return "script_error"
    for name, value in (request.get("secrets") or {}).items():
        os.environ[str(name)] = str(value)

    failure = ScriptFailure(script, body_offset, toolbox.files)
    unrestricted = bool(request.get("unrestricted")) and os.environ.get(UNRESTRICTED_ENV) == "1"
    script_globals: dict[str, Any] = {
        "__name__": "__main__",
        "__builtins__": builtins if unrestricted else restricted_builtins(safety, emitters),
        "ToolResponse": tool_types.ToolResponse,
        "emit_intermediate": emitters.emit_intermediate,
        "emit_log": emitters.emit_log,
        "emit_result": emitters.emit_result,
    }
    script_globals.update(module_views(safety))
    script_globals.update(toolbox.functions)
    if request.get("unrestricted") and not unrestricted:
        refused = "unrestricted mode refused: this runner does not allow it"
        channel.send("log", {"message": refused, "stream": "harness"})

    try:
        code = compile(script, SCRIPT_FILENAME, "exec")
    except SyntaxError as exc:
        channel.send("error", failure.syntax(exc))
        return "script_error"

    sys.stdout, sys.stderr = stdout, stderr
    try:
        exec(code, script_globals)
    except BaseException as exc:  # every failure of the script is reported, never raised
        stdout.flush()
        stderr.flush()
        channel.send("error", failure.runtime(exc))
        return "script_error"
    stdout.flush()
    stderr.flush()
    if not emitters.result_sent:
        message = "The script finished without calling emit_result(...)"
        channel.send("error", error_data("NoResult", message))
        return "script_error"
    return "result"


def read_line(fd: int) -> bytes:
    """Read one line from a raw fd without a buffered reader a script could reach."""
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        if b"\n" in chunk:
            break
    return b"".join(chunks)


def main(argv: list[str]) -> None:
    """Wire the channel, announce readiness, run one request and exit."""
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    # The protocol gets a private, non-inheritable copy of stdout; fd 1 itself is pointed at
    # stderr so that nothing the script or a tool writes there can forge or corrupt events.
    proto_fd = os.dup(1)
    os.set_inheritable(proto_fd, False)
    os.dup2(2, 1)
    in_fd = os.dup(0)
    os.set_inheritable(in_fd, False)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    channel = Channel(proto_fd)

    sys.path[:0] = [root, os.path.join(root, "site")]
    from jazzmine.core.tools import safety
    from jazzmine.core.tools import types as tool_types

    toolbox = ToolBox(root, tool_types)
    stdout = LogWriter(channel, "stdout")
    stderr = LogWriter(channel, "stderr")
    emitters = Emitters(channel, stdout)
    channel.ready(sorted(toolbox.functions))

    line = read_line(in_fd)
    if not line.strip():
        os._exit(0)  # the pool closed this idle sandbox: nothing to report
    try:
        request = _json_loads(line)
        if not isinstance(request, dict):
            raise ValueError("the request must be a JSON object")
    except ValueError as exc:
        channel.send("error", error_data("BadRequest", f"Unreadable run request: {exc}"))
        channel.send("exit", {"outcome": "script_error"})
        os._exit(0)
    try:
        outcome = _execute(request, channel, safety, tool_types, toolbox, emitters, stdout, stderr)
    except BaseException as exc:  # a harness bug must still end the protocol cleanly
        trace = "".join(_format_exception(type(exc), exc, exc.__traceback__))
        channel.send(
            "error", error_data(type(exc).__name__, f"Harness failure: {exc}", trace=trace)
        )
        outcome = "script_error"
    channel.send("exit", {"outcome": outcome})
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
