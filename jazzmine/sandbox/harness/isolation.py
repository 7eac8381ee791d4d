"""Each tool with secrets of its own runs in a process of its own, which alone holds them.

Scoping a secret to its tool's calls (`ToolBox._call_environment`) kept it from the other
tools and from what they spawn, but not from the script: the tools ran in the script's
process, so a script that got past the validator found every secret in its own memory (the
ToolBox's tables, the environment while a call ran). Now such a tool's calls cross pipes to
a process forked from the worker before the script's first line, with the tools loaded and
nothing of the script in it yet. The relay hands that process its tool's secrets over a pipe
of their own, after the fork: they never enter the script's address space, and the process
is non-dumpable (`process.no_dump`, inherited), so no process of the same uid reads its
memory, environment or descriptors.

The secrets pipe is read by one tool process after the other, each taking exactly one
message (its own tool's): the worker starts the next only once the last said it is ready.
A tool's output during a call comes back with its response and becomes the run's logs, in
order. Only plain data crosses (`wire.py`). While a call runs, nothing of the script does
(`freeze.py`), and such calls take turns.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import wire
from .freeze import freeze, thaw
from .reaper import become_subreaper, end_descendants, spare
from .toolbox import ToolBox, refusal_message

# What one call may print before the rest is cut: it comes back in one message.
MAX_CALL_OUTPUT_CHARS = 1_000_000


def parse_isolated(value: Any) -> tuple[list[str], str | None]:
    """Read a request's `isolated_tools` (the tools with secrets of their own), sorted."""
    if value is None:
        return [], None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return sorted(set(value)), None
    return [], "the run request's isolated_tools is malformed: no tool gets a secret of its own"


class ToolHost:
    """The worker's side of one tool's own process: its pipes, one call at a time."""

    def __init__(self, name: str, pid: int, calls: int, replies: int) -> None:
        self.name = name
        self.pid = pid
        self.calls = calls
        self.replies = replies
        self.lock = threading.Lock()
        self.gone = False
        self.started = False  # its `ready` read: it holds its secrets

    def wait_started(self) -> None:
        """Read the process's `ready` (once): it has taken its secrets, or it is gone."""
        if not self.started:
            self.started = True
            self.gone = self.gone or wire.receive(self.replies) is None

    def ask(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Send a call and return the reply; None once the process has ended."""
        with self.lock:
            self.wait_started()
            if self.gone:
                return None
            try:
                wire.send(self.calls, message)
                reply = wire.receive(self.replies)
            except OSError:
                reply = None
            self.gone = reply is None
            return reply


def start_hosts(
    names: list[str], toolbox: ToolBox, secrets_fd: int, close_in_child: tuple[int, ...]
) -> dict[str, ToolHost]:
    """Fork one process per tool in `names`, each taking its secrets; close `secrets_fd`.

    `close_in_child` are descriptors of the worker no tool process may hold (the event
    pipe: a tool's output goes back with its response).
    """
    if not names:
        os.close(secrets_fd)
        return {}
    hosts: dict[str, ToolHost] = {}
    started: list[ToolHost] = []
    held: list[int] = []  # the worker's ends of earlier hosts' pipes: none of the next's
    relay = os.getppid()  # everything of the sandbox is below it (freeze.py)
    # One call of such a tool at a time, across their processes: each holds the script
    # stopped while its call runs, and one that ended first must not let it go on.
    turn_r, turn_w = os.pipe()
    os.write(turn_w, b"1")
    try:
        for name in names:
            call_r, call_w = os.pipe()
            reply_r, reply_w = os.pipe()
            pid = os.fork()
            if pid == 0:
                _child(name, toolbox, _Fds(secrets_fd, call_r, reply_w, turn_r, turn_w),
                       relay, (*close_in_child, call_w, reply_r, *held))  # fmt: skip
            os.close(call_r)
            os.close(reply_w)
            spare(pid)  # not ended with what the worker's own tools leave (reaper.py)
            host = ToolHost(name, pid, call_w, reply_r)
            held += [call_w, reply_r]
            started.append(host)
            # Its secrets taken before the next process exists (that one must read only its
            # own), and before the script starts: a script that read the tool's pipes would
            # otherwise take its `ready`, and its first call would wait for ever.
            host.wait_started()
            if name in toolbox.functions:
                hosts[name] = host
        # Which processes are the tools' (never stopped with the script's), said before the
        # script runs: the first message each reads.
        others = sorted(host.pid for host in started)
        for host in started:
            with contextlib.suppress(OSError):
                wire.send(host.calls, {"tools": others})
    finally:
        for fd in (secrets_fd, turn_r, turn_w):
            os.close(fd)
    return hosts


@dataclass(frozen=True)
class _Fds:
    """A tool process's descriptors: its secrets, its two pipes, and the turn to call."""

    secrets: int
    calls: int
    replies: int
    turn_r: int
    turn_w: int


def _child(name: str, toolbox: ToolBox, fds: _Fds, relay: int, close: tuple[int, ...]) -> None:
    """The tool's own process: take its secrets, then answer calls until the worker ends."""
    try:
        for fd in close:
            os.close(fd)
        given = wire.receive(fds.secrets)
        os.close(fds.secrets)
        secrets = _own_secrets(name, given)
        become_subreaper()  # what its calls start stays below it, and ends with each call
        output = CallOutput()
        sys.stdout, sys.stderr = output.stream("stdout"), output.stream("stderr")
        toolbox.on_refused = None  # the worker reported it before asking
        toolbox.on_fatal = lambda text: wire.send(
            fds.replies, {"fatal": text, "logs": output.take()}
        )
        toolbox.own_secrets(name, secrets)
        wire.send(fds.replies, {"ready": True})
        first = wire.receive(fds.calls)
        tools = first.get("tools") if first is not None else None
        function = toolbox.functions.get(name)
        if not isinstance(tools, list) or not all(isinstance(pid, int) for pid in tools):
            function = None  # not knowing which processes are the tools', it calls nothing
        spared = frozenset((*(tools or ()), os.getpid()))
        while function is not None:
            message = wire.receive(fds.calls)
            if message is None:
                break
            value = _called(toolbox, name, function, message, fds, relay, spared)
            wire.send(fds.replies, {"value": value, "logs": output.take()})
        end_descendants()
    except BaseException:
        traceback.print_exc()
        os._exit(70)
    os._exit(0)


def _called(
    toolbox: ToolBox,
    name: str,
    function: Callable[..., Any],
    message: Any,
    fds: _Fds,
    relay: int,
    spared: frozenset[int],
) -> Any:
    """Make one call with the rest of the sandbox stopped (freeze.py); return wire data."""
    if wire.read_exactly(fds.turn_r, 1) is None:
        return _as_wire(toolbox, name, toolbox.failure(f"Tool {name!r} was not run: no turn"))
    try:
        frozen = freeze(relay, spared)
        if frozen is None:
            failed = toolbox.failure(
                f"Tool {name!r} was not run: the script's processes could not all be paused "
                "for its call"
            )
            return _as_wire(toolbox, name, failed)
        try:
            return _answer(toolbox, name, function, message)
        finally:
            thaw(frozen)
    finally:
        os.write(fds.turn_w, b"1")


def _own_secrets(name: str, given: Any) -> dict[str, str]:
    """Read the relay's message for this tool; anything else sets no secret (fail closed)."""
    if not isinstance(given, dict) or given.get("tool") != name:
        return {}
    secrets = given.get("secrets")
    if not isinstance(secrets, dict):
        return {}
    return {str(k): str(v) for k, v in secrets.items()}


def _answer(toolbox: ToolBox, name: str, function: Callable[..., Any], message: Any) -> Any:
    """Run one call the worker passed on and return its response as wire data."""
    response_type = toolbox.types.ToolResponse
    try:
        args = wire.from_wire(message["a"], response_type)
        kwargs = wire.from_wire(message["k"], response_type)
        if not isinstance(args, list) or not isinstance(kwargs, dict):
            raise ValueError("a call is a list of arguments and a dict of keywords")
        if not all(isinstance(key, str) for key in kwargs):
            raise ValueError("keyword names are text")
    except Exception as exc:
        value: Any = toolbox.failure(f"Tool {name!r} was not run: an unreadable call ({exc})")
    else:
        value = function(*args, **kwargs)  # the ToolBox's wrapper: it never raises
    return _as_wire(toolbox, name, value)


def _as_wire(toolbox: ToolBox, name: str, value: Any) -> Any:
    """Return a tool's response as wire data, or a failed one saying why it cannot be."""
    response_type = toolbox.types.ToolResponse
    try:
        return wire.to_wire(value, response_type)
    except (wire.Unpassable, RecursionError) as exc:
        why = toolbox.redacted(f"{type(exc).__name__}: {exc}")
        failed = toolbox.failure(f"Tool {name!r} returned data that cannot be passed back ({why})")
        return wire.to_wire(failed, response_type)


class CallOutput:
    """What a tool prints during one call, kept to go back with its response."""

    def __init__(self) -> None:
        self._pieces: list[list[str]] = []
        self._size = 0
        self._cut = False

    def stream(self, name: str) -> _Stream:
        """Return a text stream writing to this call's output as `name` (stdout, stderr)."""
        return _Stream(self, name)

    def add(self, name: str, text: str) -> None:
        """Keep `text`, within the call's bound."""
        room = MAX_CALL_OUTPUT_CHARS - self._size
        if room <= 0:
            self._cut = True
            return
        self._pieces.append([name, text[:room]])
        self._size += min(len(text), room)
        self._cut = self._cut or len(text) > room

    def take(self) -> list[list[str]]:
        """Return and forget what the call printed."""
        pieces, self._pieces, self._size = self._pieces, [], 0
        if self._cut:
            pieces.append(["stderr", f"\n[output of the call cut at {MAX_CALL_OUTPUT_CHARS} "
                                     "characters]\n"])  # fmt: skip
            self._cut = False
        return pieces


class _Stream:
    def __init__(self, output: CallOutput, name: str) -> None:
        self._output = output
        self._name = name

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._output.add(self._name, text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return "utf-8"


def proxy(host: ToolHost, toolbox: ToolBox, streams: dict[str, Any]) -> Callable[..., Any]:
    """Return the function a script calls for a tool that runs in `host`'s process."""
    name = host.name
    response_type = toolbox.types.ToolResponse

    def call(*args: Any, **kwargs: Any) -> Any:
        if toolbox.refused(name):
            return toolbox.failure(refusal_message(name))
        try:
            message = {"a": wire.to_wire(list(args), response_type),
                       "k": wire.to_wire(kwargs, response_type)}  # fmt: skip
        except (wire.Unpassable, RecursionError) as exc:
            return toolbox.failure(f"Tool {name!r} was not run: {exc}")
        except Exception as exc:  # a lazy argument the script made raised as it was read
            why = f"{type(exc).__name__}: {exc}"
            return toolbox.failure(f"Tool {name!r} was not run: reading its arguments raised {why}")
        reply = host.ask(message)
        if reply is None:
            return toolbox.failure(
                f"Tool {name!r} was not run: the process it runs in, the only one holding its "
                "secrets, has ended"
            )
        for piece in reply.get("logs") or []:
            stream = streams.get(str(piece[0]), streams["stdout"])
            stream.write(str(piece[1]))
        if "fatal" in reply:
            _fatal(toolbox, str(reply["fatal"]))
        try:
            return wire.from_wire(reply.get("value"), response_type)
        except Exception as exc:
            return toolbox.failure(f"Tool {name!r} sent back an unreadable response ({exc})")

    call.__name__ = name
    call.__doc__ = getattr(toolbox.functions.get(name), "__doc__", None)
    return call


def _fatal(toolbox: ToolBox, text: str) -> None:
    # The tool's process ended the run (ToolBox.fatal there): end it here the same way.
    if toolbox.on_fatal is not None:
        toolbox.on_fatal(text)
    os._exit(70)
