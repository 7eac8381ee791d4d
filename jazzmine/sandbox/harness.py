"""Run one LLM-written script inside a sandbox and report what happens as JSON event lines.

Stdlib-only: this file is copied into every sandbox image (and bwrap runtime directory) next to
`jazzmine/core/tools/safety.py` and `types.py`. Protocol, one JSON object a line on the
original stdout:

    {"type": "ready", ...}                         once the tools are loaded (before any request)
    {"seq": n, "type": "log"|"intermediate"|"result"|"error"|"exit", "data": ..., "ts": float}

Two processes, so that the one owning the channel to the host never runs untrusted code:

- the *relay* (this process, pid 1 in a container) keeps the host's stdout, reads the one
  request line from stdin, hands it over, then validates, numbers and forwards what the worker
  reports, and decides the `exit` itself from how the worker ended;
- the *worker* (forked before `ready`, so dispatch costs one pipe write) loads the tools and
  runs the script. It reaches the relay only through a pipe, with lines framed by a token
  drawn before the fork, so nothing it or its tools print elsewhere can forge or end the run.

Both are non-dumpable: a tool's subprocess (same uid) cannot read their memory, environment
or descriptors through /proc or ptrace. Inside the worker the script runs with restricted
builtins, every attribute access rewritten through a checked accessor, and an audit hook that
refuses process creation, code execution and imports made from the script's own frames.
The harness runs exactly ONE request and terminates: a process is never reused.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import datetime
import inspect
import json
import math
import os
import re
import select
import sys
import threading
import time
import traceback
import types
from collections.abc import Callable
from typing import Any

HARNESS_PROTOCOL = 2
SCRIPT_FILENAME = "<script>"
# Set by the runner only when it was created with allow_unrestricted=True (tests of the
# container walls); a request alone can never lift the restricted builtins.
UNRESTRICTED_ENV = "JAZZMINE_HARNESS_ALLOW_UNRESTRICTED"

# The host refuses events beyond these bounds (jazzmine/sandbox/events.py holds the same
# numbers); the harness checks first so a script gets an exception it can read and handle.
MAX_SAFE_INT = 2**53 - 1
MAX_EVENT_DEPTH = 64
MAX_DATA_DEPTH = MAX_EVENT_DEPTH - 4  # room for the event and intermediate wrappers
MAX_LINE_BYTES = 8 * 1024 * 1024
_SURROGATES = re.compile("[\ud800-\udfff]")

# Private references taken before any script or tool code runs: a script that rebinds
# `json.dumps` or `time.time` must not be able to break or forge the channel.
_os_write = os.write
_os_read = os.read
_now = time.time
_encode = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode
_Lock = threading.Lock
_isawaitable = inspect.isawaitable
_extract_tb = traceback.extract_tb
_format_exception = traceback.format_exception
_json_loads = json.loads
_getframe = sys._getframe
_real_getattr = builtins.getattr
_real_type = builtins.type

PR_SET_DUMPABLE = 4


def no_dump() -> None:
    """Make this process non-dumpable so same-uid processes cannot read its memory or environ."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        # Fail closed: a harness whose memory a tool could read must not run anything.
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def clean_text(text: str) -> str:
    """Replace lone surrogates (not encodable as UTF-8) with U+FFFD."""
    return _SURROGATES.sub("\ufffd", text) if _SURROGATES.search(text) else text


def clean(value: Any) -> Any:
    """Return JSON data with every string made valid Unicode (for logs and error reports)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(str(k)): clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean(v) for v in value]
    return value


def data_problem(value: Any, limit: int = MAX_DATA_DEPTH) -> str | None:
    """Say why plain JSON data breaks the protocol's bounds, or return None."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if _SURROGATES.search(item):
                return "strings must be valid Unicode (found a lone surrogate)"
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if not -MAX_SAFE_INT <= item <= MAX_SAFE_INT:
                return f"integers must lie within ±(2**53 - 1) (got one of {len(str(item))} digits)"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return "numbers must be finite"
        elif isinstance(item, (list, dict)):
            if depth > limit:
                return f"data may nest at most {limit} levels deep"
            if isinstance(item, dict):
                for key, child in item.items():
                    if not isinstance(key, str):
                        return "dict keys must be strings"
                    stack.append((key, depth + 1))
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)
        else:
            return f"{type(item).__name__} is not JSON data"
    return None


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

    def ready(self, tools: list[str]) -> None:
        """Tell the relay that the tools are loaded."""
        self._write({"type": "ready", "tools": tools})

    def send(self, type_: str, data: Any) -> None:
        """Report one event; `data` must already be known to be JSON-safe."""
        if type_ in ("log", "error"):
            data = clean(data)
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


# --- the second wall: checked attribute access and an audit hook ----------------------------

# Names the rewritten script calls; a script may not mention (and so never rebind) them.
GUARD_PREFIX = "__jazzmine_"
GUARD_GET = "__jazzmine_getattr__"
GUARD_SET = "__jazzmine_setattr__"
GUARD_DEL = "__jazzmine_delattr__"

# Objects whose every attribute is interpreter machinery: reading anything from them is the
# step of an escape after the first (frames, code, tracebacks, generator internals, raw
# modules, function and method objects). Scripts only ever call these, never read from them.
_OPAQUE_TYPES: tuple[type, ...] = (
    types.FrameType, types.CodeType, types.TracebackType, types.GeneratorType,
    types.CoroutineType, types.AsyncGeneratorType, types.ModuleType, types.FunctionType,
    types.BuiltinFunctionType, types.MethodType, types.CellType, types.MappingProxyType,
    types.MethodWrapperType, types.WrapperDescriptorType, types.MethodDescriptorType,
    types.ClassMethodDescriptorType, types.GetSetDescriptorType, types.MemberDescriptorType,
)  # fmt: skip


class SandboxViolation(RuntimeError):
    """The script did something the sandbox refuses at run time."""


def _checked_template(template: Any, format_problem: Callable[[str], str | None]) -> Any:
    if isinstance(template, str):
        problem = format_problem(template)
        if problem is not None:
            raise SandboxViolation(
                f"the format field {{{problem}}} reaches into attributes or items, which the "
                "sandbox refuses; use plain fields like {} or {name}, or an f-string"
            )
    return template


class Guards:
    """The checked accessors the rewritten script calls instead of plain attribute syntax."""

    def __init__(
        self, forbidden: frozenset[str], format_problem: Callable[[str], str | None]
    ) -> None:
        self.forbidden = forbidden
        self.format_problem = format_problem  # safety.format_field_problem, as the validator

    def name(self, name: Any) -> str:
        """Return an attribute name a script may use, or raise."""
        if type(name) is not str:
            raise TypeError("attribute name must be a string")
        if not name or name[0] == "_" or name in self.forbidden:
            raise SandboxViolation(f"attribute {name!r} is not available in the sandbox")
        return name

    def object(self, obj: Any, name: str) -> None:
        """Refuse every attribute of interpreter machinery."""
        if isinstance(obj, _OPAQUE_TYPES):
            raise SandboxViolation(
                f"attribute {name!r} of a {type(obj).__name__} object is not available in the "
                "sandbox"
            )

    def get(self, obj: Any, name: Any, *default: Any) -> Any:
        """Read `obj.name` after checking the name and the object."""
        name = self.name(name)
        self.object(obj, name)
        if name == "format":
            return self._format(obj)
        return _real_getattr(obj, name, *default)

    def has(self, obj: Any, name: Any) -> bool:
        """Answer hasattr() without ever reaching what get() refuses."""
        try:
            self.get(obj, name)
        except (AttributeError, SandboxViolation, TypeError):
            return False
        return True

    def set(self, obj: Any, name: Any, value: Any) -> None:
        """Assign `obj.name = value` after the same checks; never on classes."""
        name = self.name(name)
        self.object(obj, name)
        if isinstance(obj, type):
            raise SandboxViolation(f"assigning {name!r} on a class is not allowed in the sandbox")
        setattr(obj, name, value)

    def delete(self, obj: Any, name: Any) -> None:
        """Delete `obj.name` after the same checks; never on classes."""
        name = self.name(name)
        self.object(obj, name)
        if isinstance(obj, type):
            raise SandboxViolation(f"deleting {name!r} on a class is not allowed in the sandbox")
        delattr(obj, name)

    def _format(self, obj: Any) -> Any:
        """Hand out str.format with its template checked: fields may not reach attributes."""
        if isinstance(obj, str):
            bound = obj.format
            template = str(obj)

            def checked(*args: Any, **kwargs: Any) -> str:
                _checked_template(template, self.format_problem)
                return bound(*args, **kwargs)

            return checked
        if isinstance(obj, type) and issubclass(obj, str):

            def unbound(template: Any, *args: Any, **kwargs: Any) -> str:
                return str.format(_checked_template(template, self.format_problem), *args, **kwargs)

            return unbound
        raise SandboxViolation("'.format' is only available on strings in the sandbox")


class Rewriter(ast.NodeTransformer):
    """Route every attribute read, write and delete of a script through the Guards."""

    def __init__(self) -> None:
        self.problems: list[tuple[int, str]] = []

    def check_names(self, tree: ast.AST) -> None:
        """Refuse any identifier in the guards' namespace: the script must not rebind them."""
        for node in ast.walk(tree):
            for field, value in ast.iter_fields(node):
                if isinstance(node, ast.Constant) or field == "attr":
                    continue
                names = value if isinstance(value, list) else [value]
                for name in names:
                    if isinstance(name, str) and name.startswith(GUARD_PREFIX):
                        self._problem(node, f"the name {name!r} is reserved by the sandbox")

    def _problem(self, node: ast.AST, text: str) -> None:
        self.problems.append((getattr(node, "lineno", 1) or 1, text))

    @staticmethod
    def _call(guard: str, node: ast.AST, *args: ast.expr) -> ast.Call:
        call = ast.Call(func=ast.Name(id=guard, ctx=ast.Load()), args=list(args), keywords=[])
        return ast.copy_location(call, node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        """Turn `x.name` into a checked read; stores and deletes are handled per statement."""
        value = self.visit(node.value)
        if not isinstance(node.ctx, ast.Load):
            self._problem(
                node,
                "assigning or deleting an attribute is only supported as a plain statement "
                "(`obj.x = value`, `del obj.x`); use a variable or a dict key",
            )
            node.value = value
            return node
        return self._call(GUARD_GET, node, value, ast.Constant(node.attr))

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        """Turn `x.name = value` into a checked write."""
        target = node.targets[0]
        if len(node.targets) == 1 and isinstance(target, ast.Attribute):
            call = self._call(
                GUARD_SET,
                node,
                self.visit(target.value),
                ast.Constant(target.attr),
                self.visit(node.value),
            )
            return ast.copy_location(ast.Expr(call), node)
        return self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> Any:
        """Turn `del x.name` into a checked delete."""
        out: list[ast.stmt] = []
        for target in node.targets:
            if isinstance(target, ast.Attribute):
                call = self._call(
                    GUARD_DEL, target, self.visit(target.value), ast.Constant(target.attr)
                )
                out.append(ast.copy_location(ast.Expr(call), node))
            else:
                out.append(ast.copy_location(ast.Delete(targets=[self.visit(target)]), node))
        return out


def rewrite(tree: ast.Module) -> tuple[ast.Module, list[tuple[int, str]]]:
    """Return the guarded tree and the problems that make it unrunnable."""
    rewriter = Rewriter()
    rewriter.check_names(tree)
    guarded = ast.fix_missing_locations(rewriter.visit(tree))
    return guarded, rewriter.problems


# Modules that C functions a script may call import lazily; loaded before the script runs.
LAZY_IMPORTS: frozenset[str] = frozenset(
    {"_strptime", "time", "encodings.latin_1", "encodings.ascii", "encodings.cp1252",
     "encodings.utf_16", "encodings.utf_32"}
)  # fmt: skip

# Audit events a script's own frames may raise. Everything else raised while the nearest
# attributable frame is the script's is refused: fail closed on events this list never saw.
SCRIPT_EVENTS: frozenset[str] = frozenset({"time.sleep"})


def install_audit_hook(tool_files: frozenset[str], trusted: frozenset[Any]) -> None:
    """Refuse audited actions (spawn, exec, import, open, ...) that the script itself makes.

    Walk from the frame that raised the event outwards: a tool's frame or the harness's
    tool-call wrapper (`trusted` code objects) means a tool acts and may; the script's frame
    means the script acts and may not. Stdlib and harness frames in between are skipped, so
    `subprocess.run` reached by the script still counts as the script's. With neither on the
    stack the harness itself acts (before or after the script), which is allowed.
    """
    local = threading.local()

    def hook(event: str, _args: tuple[Any, ...]) -> None:
        if event in SCRIPT_EVENTS or getattr(local, "busy", False):
            return
        local.busy = True
        try:
            frame = _getframe(1)
            while frame is not None:
                code = frame.f_code
                if code in trusted:
                    return
                filename = code.co_filename
                if filename == SCRIPT_FILENAME:
                    raise SandboxViolation(f"{event!r} is not allowed from a sandbox script")
                if filename in tool_files:
                    return
                frame = frame.f_back
        finally:
            local.busy = False

    sys.addaudithook(hook)


def restricted_builtins(safety: Any, emitters: Emitters, guards: Guards) -> dict[str, Any]:
    """Build the builtins of a script from the shared safe list, with guarded introspection."""
    names = safety.runtime_names()
    table = {n: getattr(builtins, n) for n in names if hasattr(builtins, n)}

    def guarded_type(*args: Any) -> Any:
        if len(args) != 1:
            raise SandboxViolation("type() takes exactly one argument in the sandbox")
        found = _real_type(args[0])
        # `type(type(x))` is the class factory: hand back this guard instead.
        return guarded_type if issubclass(found, _real_type) else found

    def guarded_import(name: Any, *_args: Any, **_kwargs: Any) -> Any:
        # C code imports through the caller's builtins (datetime.strptime -> _strptime):
        # hand out only those modules, already loaded; a script's own import is refused.
        if name in LAZY_IMPORTS and name in sys.modules:
            return sys.modules[name]
        raise ImportError(f"__import__ of {name!r} is refused in the sandbox")

    table["__import__"] = guarded_import
    if "getattr" in table:
        table["getattr"] = guards.get
    if "hasattr" in table:
        table["hasattr"] = guards.has
    if "type" in table:
        table["type"] = guarded_type
    table["print"] = emitters.print
    table[GUARD_GET] = guards.get
    table[GUARD_SET] = guards.set
    table[GUARD_DEL] = guards.delete
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


def refusal_message(name: str) -> str:
    """Explain a call to a tool the run may not make."""
    return (
        f"Tool {name!r} is not allowed in this run: it needs a person's approval, and this "
        "script was let through without one. Use only the always-allowed tools, or submit "
        "the script for review"
    )


def parse_allowed(value: Any) -> tuple[frozenset[str] | None, str | None]:
    """Read a request's `allowed_tools`: None means every tool; anything malformed, none."""
    if value is None:
        return None, None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return frozenset(value), None
    return frozenset(), "the run request's allowed_tools is malformed: no tool may be called"


class ToolBox:
    """Load the teleported tool sources and expose each as a plain, never-raising function."""

    def __init__(self, root: str, tool_types: Any) -> None:
        self.root = root
        self.types = tool_types
        self.functions: dict[str, Any] = {}
        self.files: dict[str, str] = {}
        # Which tools this run may call (None: all) and who hears of a refusal; set per run.
        self.allowed: frozenset[str] | None = frozenset()
        self.on_refused: Callable[[str], None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.wrapper_codes: set[Any] = set()
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

    def refused(self, name: str) -> bool:
        """Tell whether this run may not call a tool (and report it when it may not)."""
        allowed = self.allowed
        if allowed is None or name in allowed:
            return False
        if self.on_refused is not None:
            self.on_refused(name)
        return True

    def _wrap(self, name: str, function: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            # Enforced here, where the code runs, whatever the host's reading of the script.
            if self.refused(name):
                return self._failure(refusal_message(name))
            try:
                value = function(*args, **kwargs)
                if _isawaitable(value):
                    value = self._run(value)
                return value
            except BaseException as exc:  # includes SystemExit from a tool: still a response
                return self._failure(f"Tool {name!r} raised {type(exc).__name__}: {exc}")

        call.__name__ = name
        call.__doc__ = getattr(function, "__doc__", None)
        self.wrapper_codes.add(call.__code__)
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
    # A missing key is as malformed as a wrong one: a run always says what it may call.
    allowed, problem = parse_allowed(request.get("allowed_tools", False))
    if problem is not None:
        channel.send("log", {"message": problem, "stream": "harness"})
    toolbox.allowed = allowed

    def on_refused(name: str) -> None:
        message = f"refused a call to tool {name!r}: " + refusal_message(name)
        channel.send("log", {"message": message, "stream": "harness"})

    toolbox.on_refused = on_refused
    for name, value in (request.get("secrets") or {}).items():
        os.environ[str(name)] = str(value)

    failure = ScriptFailure(script, body_offset, toolbox.files)
    unrestricted = bool(request.get("unrestricted")) and os.environ.get(UNRESTRICTED_ENV) == "1"
    guards = Guards(frozenset(safety.FORBIDDEN_ATTRIBUTES), safety.format_field_problem)
    script_globals: dict[str, Any] = {
        "__name__": "__main__",
        "__builtins__": builtins if unrestricted else restricted_builtins(safety, emitters, guards),
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
        tree = ast.parse(script, SCRIPT_FILENAME, "exec")
        if not unrestricted:
            tree, problems = rewrite(tree)
            if problems:
                line, text = problems[0]
                where = line - body_offset
                message = f"SandboxViolation at line {where} of the script: {text}"
                channel.send("error", error_data("SandboxViolation", message, line=where))
                return "script_error"
        code = compile(tree, SCRIPT_FILENAME, "exec")
    except SyntaxError as exc:
        channel.send("error", failure.syntax(exc))
        return "script_error"
    except (ValueError, RecursionError, MemoryError) as exc:
        message = f"The script could not be compiled: {type(exc).__name__}: {exc}"
        channel.send("error", error_data(type(exc).__name__, message))
        return "script_error"

    if not unrestricted:
        trusted = frozenset(toolbox.wrapper_codes)
        install_audit_hook(frozenset(toolbox.files), trusted)
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


class Worker:
    """A forked process that will run untrusted code, and the relay's ends of its pipes."""

    def __init__(self, pid: int, events: int, requests: int, token: bytes) -> None:
        self.pid = pid
        self.events = events
        self.requests = requests
        self.token = token
        self.status: int | None = None  # the raw wait status, once reaped


def fork_worker(body: Callable[[int, int, bytes], None], keep: tuple[int, ...] = ()) -> Worker:
    """Fork a worker running `body(request_fd, event_fd, token)`; it never returns here.

    Every descriptor in `keep` (the host channel, the real stdin) is closed in the worker
    before any of its code runs, so nothing in it can write to the host directly.
    """
    token = os.urandom(16).hex().encode("ascii")
    request_r, request_w = os.pipe()
    event_r, event_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            for fd in (*keep, request_w, event_r):
                os.close(fd)
            no_dump()  # inherited already; said again so the worker never depends on it
            body(request_r, event_w, token)
        except BaseException:
            traceback.print_exc()
            os._exit(70)
        os._exit(0)
    os.close(request_r)
    os.close(event_w)
    return Worker(pid, event_r, request_w, token)


def worker_lines(worker: Worker, limit: int = MAX_LINE_BYTES) -> Any:
    """Yield (payload or None, refused text) for each line the worker writes, until it ends.

    A line that does not carry the worker's token (a tool writing blindly to descriptors)
    is refused, never interpreted; an endless line ends the worker.
    """
    prefix = worker.token + b" "
    pending = b""
    while True:
        readable, _, _ = select.select([worker.events], [], [], 0.2)
        if not readable:
            # Quiet: a worker that died while a grandchild keeps the pipe open must not hang us.
            pid, _status = os.waitpid(worker.pid, os.WNOHANG)
            if pid == 0:
                continue
            worker.status = _status
            return
        chunk = _os_read(worker.events, 1 << 16)
        if not chunk:
            return
        pending += chunk
        if b"\n" not in chunk:
            if len(pending) > limit:
                os.kill(worker.pid, 9)
                yield None, f"a line of more than {limit} bytes"
                return
            continue
        *lines, pending = pending.split(b"\n")
        for line in lines:
            at = line.find(prefix)
            if at < 0:
                yield None, _excerpt(line)
                continue
            if at > 0:
                yield None, _excerpt(line[:at])
            try:
                payload = _json_loads(line[at + len(prefix) :], parse_constant=_refuse_constant)
            except (ValueError, RecursionError) as exc:
                yield None, f"an unreadable line ({exc})"
                continue
            yield payload, ""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _excerpt(raw: bytes) -> str:
    text = raw[:120].decode("utf-8", "replace")
    return clean_text(text) + ("..." if len(raw) > 120 else "")


def worker_status(worker: Worker) -> int:
    """Wait for the worker to end and return its raw wait status."""
    status = worker.status
    if status is None:
        _pid, status = os.waitpid(worker.pid, 0)
    return status


def describe_status(status: int) -> str:
    """Say in words how a worker ended."""
    if os.WIFSIGNALED(status):
        signal = os.WTERMSIG(status)
        hint = " (out of memory?)" if signal == 9 else ""
        return f"killed by signal {signal}{hint}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


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
        """Check one message of the worker and forward it, or record why it was refused."""
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
            self.breach = f"a {type_!r} message after the script had ended"
            return
        if type_ not in self.EVENT_TYPES:
            self.breach = f"a message of unknown type {clean_text(str(type_))[:40]!r}"
            return
        data = payload.get("data")
        if type_ in ("log", "error"):
            data = clean(data)
        problem = data_problem(data, MAX_DATA_DEPTH + 1)
        if problem is None and type_ == "log" and not _has_message(data):
            problem = "a log without a message"
        if problem is None and type_ == "error" and not isinstance(data, dict):
            problem = "an error that is not an object"
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
        if self.breach is not None:
            message = f"the script process broke the event protocol: it sent {self.breach}"
            self.send("error", {"kind": "protocol_error", "exception": "ProtocolError",
                                "line": None, "message": message, "traceback": ""})  # fmt: skip
            outcome = "script_error"
        elif self.outcome == "result" and self.results == 1 and normal:
            outcome = "result"
        elif self.outcome is None:
            # The worker ended without saying so (a crash, a kill, os._exit): nothing it
            # printed decides the run. Leave without an exit event, with the worker's own
            # status, so the host judges the sandbox (out of memory, crash) from outside.
            sys.stderr.write(
                f"harness: the script process ended before the script did: "
                f"{describe_status(status)}\n"
            )
            sys.stderr.flush()
            os._exit(_mirror(status))
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


def _mirror(status: int) -> int:
    """Return the exit code that tells the host how the worker ended."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    code = os.waitstatus_to_exitcode(status)
    return code if code != 0 else 70


def run_worker(root: str, request_fd: int, event_fd: int, token: bytes) -> None:
    """The worker: load the tools, say ready, run the one request the relay hands over."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    channel = Channel(event_fd, token)
    sys.path[:0] = [root, os.path.join(root, "site")]
    from jazzmine.core.tools import safety
    from jazzmine.core.tools import types as tool_types

    toolbox = ToolBox(root, tool_types)
    # Modules C code imports lazily on a script's behalf (datetime.strptime imports
    # _strptime) would be refused imports from the script's frame; load them now, before
    # `ready`, so that their cost is never part of a dispatch.
    for name in sorted(LAZY_IMPORTS):
        __import__(name)
    stdout = LogWriter(channel, "stdout")
    stderr = LogWriter(channel, "stderr")
    emitters = Emitters(channel, stdout)
    channel.ready(sorted(toolbox.functions))

    line = read_line(request_fd)
    os.close(request_fd)
    if not line.strip():
        os._exit(0)
    try:
        request = _json_loads(line)
        if not isinstance(request, dict):
            raise ValueError("the request must be a JSON object")
    except ValueError as exc:
        channel.send("error", error_data("BadRequest", f"Unreadable run request: {exc}"))
        channel.done("script_error")
        os._exit(0)
    del line
    try:
        outcome = _execute(request, channel, safety, tool_types, toolbox, emitters, stdout, stderr)
    except BaseException as exc:  # a harness bug must still end the protocol cleanly
        trace = "".join(_format_exception(type(exc), exc, exc.__traceback__))
        channel.send(
            "error", error_data(type(exc).__name__, f"Harness failure: {exc}", trace=trace)
        )
        outcome = "script_error"
    channel.done(outcome)
    os._exit(0)


def main(argv: list[str]) -> None:
    """Fork the worker, announce readiness, relay one run and exit."""
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    no_dump()
    # The host channel is a private, non-inheritable copy of stdout that only this process
    # holds; fd 1 itself points at stderr so nothing written there can reach the host.
    proto_fd = os.dup(1)
    os.set_inheritable(proto_fd, False)
    os.dup2(2, 1)
    in_fd = os.dup(0)
    os.set_inheritable(in_fd, False)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    worker = fork_worker(
        lambda request_fd, event_fd, token: run_worker(root, request_fd, event_fd, token),
        keep=(proto_fd, in_fd),
    )
    relay = Relay(proto_fd)
    lines = worker_lines(worker)
    tools: list[str] = []
    for payload, refused in lines:
        if payload is not None and payload.get("type") == "ready":
            tools = [str(t) for t in payload.get("tools") or []]
            break
        if refused:
            sys.stderr.write(f"harness: refused a line from the worker: {refused}\n")
    relay.ready(tools)

    line = read_line(in_fd)
    if not line.strip():
        os.kill(worker.pid, 9)
        os._exit(0)  # the pool closed this idle sandbox: nothing to report
    try:
        view = memoryview(line if line.endswith(b"\n") else line + b"\n")
        while view:
            view = view[_os_write(worker.requests, view) :]
    except OSError:
        pass  # the worker is gone; how it ended decides the run below
    os.close(worker.requests)
    del line, view
    for payload, refused in lines:
        if payload is None:
            relay.note(
                f"refused a line on the event pipe that the harness did not write: {refused}"
            )
            continue
        relay.accept(payload)
    relay.finish(worker_status(worker))
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
