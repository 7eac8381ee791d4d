"""Run one bash script inside a sandbox container, with the sandbox's tools as builtins.

Copied into the bash image as /opt/jazzmine-bash/runner.py next to `bash_engine.py` (a copy
of jazzmine/bash/engine.py), `bash_blindspots.py` (of blindspots.py, which the engine imports)
and an unpacked bashkit. It loads the tools exactly as the harness
does (the harness's ToolBox from /opt/jazzmine/jazzmine/sandbox/harness), reads ONE request line from stdin, and writes
JSON lines on a private copy of stdout: `{"type": "call", "data": {...}}` after every builtin
call, then `{"type": "result", "data": {...}}`.

As in the harness, the process holding stdout runs no tool: it forks a worker that loads the
tools and runs bash, and relays only the token-framed lines the worker writes to its pipe,
at most one final line, and nothing once the worker has ended.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

SANDBOX_ROOT = "/opt/jazzmine"
HERE = os.path.dirname(os.path.abspath(__file__))


def _write(fd: int, payload: dict[str, Any]) -> None:
    data = (json.dumps(payload, ensure_ascii=True, separators=(",", ":")) + "\n").encode()
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _framed(fd: int, token: bytes, payload: dict[str, Any]) -> None:
    data = json.dumps(payload, ensure_ascii=True, separators=(",", ":")).encode()
    view = memoryview(token + b" " + data + b"\n")
    while view:
        view = view[os.write(fd, view) :]


def _parse_allowed(value: Any) -> frozenset[str] | None:
    """None allows every builtin; a malformed value (or a missing key) allows none."""
    if value is None:
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return frozenset(value)
    return frozenset()


def run_worker(root: str, request_fd: int, event_fd: int, token: bytes) -> None:
    """The worker: load tools, run the one request, report calls and the result."""
    import bash_engine

    from jazzmine.core.tools import types as tool_types
    from jazzmine.sandbox.harness import ToolBox, read_line

    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    try:
        request = json.loads(read_line(request_fd) or b"{}")
        script = request["script"]
        specs = [bash_engine.ToolSpec.from_dict(s) for s in request.get("tools", [])]
        limits = bash_engine.BashLimits(**request.get("limits", {}))
    except (ValueError, KeyError, TypeError) as exc:
        _framed(event_fd, token, {"type": "error", "data": {"message": f"bad bash request: {exc}"}})
        return
    allowed = _parse_allowed(request.get("allowed_tools", False))
    toolbox = ToolBox(root, tool_types)
    # As in the harness: a secret that is one tool's is set only while that tool runs.
    shared, problem = toolbox.take_secrets(request.get("secrets"), request.get("tool_secrets"))
    if problem is not None:
        sys.stderr.write(f"runner: {problem}\n")
    os.environ.update(shared)
    toolbox.allowed = allowed  # the same wall again, for builtins that reach a tool otherwise
    # And what each builtin may pass its tool: the parameters its schema documents (bashkit
    # hands over whatever flags a line spells).
    toolbox.parameters = {
        spec.name: frozenset((spec.schema or {}).get("properties") or {}) for spec in specs
    }
    session = bash_engine.BashSession(
        specs,
        toolbox.functions,
        limits=limits,
        on_call=lambda call: _framed(event_fd, token, {"type": "call", "data": call.to_dict()}),
        allowed_tools=allowed,
    )
    result = session.run(script)
    # Each call went out as its own event already: sent again with the result, every call
    # counted twice against the sandbox's output cap (9,000 calls of a script that printed
    # nothing ended the run at "output limit", its result lost).
    data = result.to_dict()
    data["calls"] = []
    _framed(event_fd, token, {"type": "result", "data": data})


def main(argv: list[str]) -> int:
    """Fork the worker, hand it the request, relay what it reports."""
    root = argv[1] if len(argv) > 1 else SANDBOX_ROOT
    sys.path[:0] = [HERE, root]
    from jazzmine.sandbox.harness import (
        fork_worker,
        read_line,
        take_host_channel,
        worker_lines,
        worker_status,
    )
    from jazzmine.sandbox.harness.worker import site_position

    # The wheels (bashkit's, then the sandbox's) after the standard library, as in the
    # harness: ahead of it, a wheel shipping a module named like one of the standard
    # library's (say `_strptime.py`) would run in its place in the worker, where every secret
    # of the run is set, whether or not a tool imports that package.
    position = site_position(sys.path)
    sys.path[position:position] = [os.path.join(HERE, "site"), os.path.join(root, "site")]

    # Tools may print: fd 1 becomes stderr so nothing they write can forge a protocol line.
    proto, in_fd = take_host_channel()
    worker = fork_worker(
        lambda request_fd, event_fd, token: run_worker(root, request_fd, event_fd, token),
        keep=(proto, in_fd),
    )
    line = read_line(in_fd)
    try:
        view = memoryview(line if line.endswith(b"\n") else line + b"\n")
        while view:
            view = view[os.write(worker.requests, view) :]
    except OSError:
        pass
    os.close(worker.requests)
    ended = False
    for payload, refused in worker_lines(worker):
        if payload is None:
            sys.stderr.write(f"runner: refused a line the runner did not write: {refused}\n")
            continue
        kind = payload.get("type") if isinstance(payload, dict) else None
        if ended or kind not in ("call", "result", "error"):
            sys.stderr.write(f"runner: refused a {kind!r} message from the worker\n")
            continue
        ended = kind != "call"
        _write(proto, {"type": kind, "data": payload.get("data")})
    status = worker_status(worker)
    if not ended:
        sys.stderr.write(f"runner: the bash worker ended without a result (status {status})\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
