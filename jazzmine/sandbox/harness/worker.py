"""The worker process: load the tools, say ready, run the one request the relay hands over."""

from __future__ import annotations

import os
import sys

from .channel import Channel, Emitters, LogWriter
from .execute import execute, script_scope, warm_compiler
from .failure import error_data
from .process import read_line
from .refs import _format_exception, _json_loads
from .scope import LAZY_IMPORTS
from .textcodecs import preload_codecs
from .toolbox import ToolBox


def site_position(path: list[str]) -> int:
    """Return where the sandbox's wheels go on `path`: after the standard library.

    Ahead of it, a wheel shipping a module named like one of the standard library's (say
    `_strptime.py`) would run in its place inside the worker, where every secret of the run
    is set. Ahead of the interpreter's own packages (dist-packages), though: the sandbox's
    pinned versions win over whatever the base image happens to ship.
    """
    for index, entry in enumerate(path):
        if os.path.basename(entry.rstrip(os.sep)) in ("site-packages", "dist-packages"):
            return index
    return len(path)


def run_worker(root: str, request_fd: int, event_fd: int, token: bytes, secrets_fd: int) -> None:
    """The worker: load the tools, say ready, run the one request the relay hands over.

    `secrets_fd` carries the tools' own secrets, which this process never reads: only the
    processes it forks for those tools do (isolation.py).
    """
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    channel = Channel(event_fd, token)
    # Modules C code imports lazily on a script's behalf (datetime.strptime imports
    # _strptime) would be refused imports from the script's frame; load them now, before
    # `ready`, so that their cost is never part of a dispatch. And before the wheels are on
    # the path: these come from the standard library, whatever a wheel ships.
    for name in sorted(LAZY_IMPORTS):
        __import__(name)
    # The same for every codec of the standard library (textcodecs): Python imports a codec's
    # module on its first use, from the frame that asked ("x".encode("idna") in a script).
    preload_codecs()
    sys.path.insert(0, root)
    # Imported here, not at the top: the shared tool modules load only in the worker, from
    # the runtime root; the relay never loads them, and a host-side import of this package
    # must not import the host's tool registry.
    from jazzmine.core.tools import safety
    from jazzmine.core.tools import types as tool_types

    # Only now the sandbox's wheels, for the tools' own imports, and never ahead of the
    # standard library (`site_position`).
    site = os.path.join(root, "site")
    sys.path.insert(site_position(sys.path), site)
    toolbox = ToolBox(root, tool_types)
    stdout = LogWriter(channel, "stdout")
    stderr = LogWriter(channel, "stderr")
    emitters = Emitters(channel, stdout)
    # What a dispatch would otherwise do first, done while the sandbox waits in its pool.
    scope = script_scope(safety, tool_types, toolbox, emitters, unrestricted=False)
    warm_compiler()
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
        outcome = execute(
            request, channel, safety, tool_types, toolbox, emitters, stdout, stderr,
            restricted_scope=scope, secrets_fd=secrets_fd,
        )  # fmt: skip
    except BaseException as exc:  # a harness bug must still end the protocol cleanly
        trace = "".join(_format_exception(type(exc), exc, exc.__traceback__))
        channel.send(
            "error", error_data(type(exc).__name__, f"Harness failure: {exc}", trace=trace)
        )
        outcome = "script_error"
    channel.done(outcome)
    os._exit(0)
