"""Run one bash script inside a sandbox container, with the sandbox's tools as builtins.

Copied into the bash image as /opt/jazzmine-bash/runner.py next to `bash_engine.py` (a copy
of jazzmine/bash/engine.py) and an unpacked bashkit. It loads the tools exactly as the harness
does (the harness's ToolBox from /opt/jazzmine), reads ONE request line from stdin, and writes
JSON lines on a private copy of stdout: `{"type": "call", "data": {...}}` after every builtin
call, then `{"type": "result", "data": {...}}`.
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


def main(argv: list[str]) -> int:
    """Load the tools, run the request's script and report calls and result."""
    root = argv[1] if len(argv) > 1 else SANDBOX_ROOT
    # Tools may print: fd 1 becomes stderr so nothing they write can forge a protocol line.
    proto = os.dup(1)
    os.set_inheritable(proto, False)
    os.dup2(2, 1)
    sys.path[:0] = [HERE, os.path.join(HERE, "site"), root, os.path.join(root, "site")]

    import bash_engine
    from harness import ToolBox, read_line

    from jazzmine.core.tools import types as tool_types

    try:
        request = json.loads(read_line(0) or b"{}")
        script = request["script"]
        specs = [bash_engine.ToolSpec.from_dict(s) for s in request.get("tools", [])]
        limits = bash_engine.BashLimits(**request.get("limits", {}))
    except (ValueError, KeyError, TypeError) as exc:
        _write(proto, {"type": "error", "data": {"message": f"bad bash request: {exc}"}})
        return 2
    for name, value in (request.get("secrets") or {}).items():
        os.environ[str(name)] = str(value)
    toolbox = ToolBox(root, tool_types)
    session = bash_engine.BashSession(
        specs,
        toolbox.functions,
        limits=limits,
        on_call=lambda call: _write(proto, {"type": "call", "data": call.to_dict()}),
    )
    result = session.run(script)
    _write(proto, {"type": "result", "data": result.to_dict()})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
