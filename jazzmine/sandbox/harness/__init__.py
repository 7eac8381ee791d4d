"""Run one LLM-written script inside a sandbox and report what happens as JSON event lines.

Stdlib-only: this package is copied into every sandbox image (and bwrap runtime directory)
next to `jazzmine/core/tools/safety.py` and `types.py`, and started through `entry.py`,
copied as `<root>/harness.py`. Protocol, one JSON object a line on the original stdout:

    {"type": "ready", ...}                         once the tools are loaded (before any request)
    {"seq": n, "type": "log"|"intermediate"|"result"|"error"|"exit", "data": ..., "ts": float}

Two processes, so that the one owning the channel to the host never runs untrusted code:

- the *relay* (pid 1 in a container; `main`, `relay`) keeps the host's stdout, reads the one
  request line from stdin, hands it over, then validates, numbers and forwards what the worker
  reports, and decides the `exit` itself from how the worker ended;
- the *worker* (`worker`, `execute`; forked before `ready`, so dispatch costs one pipe write)
  loads the tools and runs the script. It reaches the relay only through a pipe (`channel`),
  with lines framed by a token drawn before the fork (`process`), so nothing it or its tools
  print elsewhere can forge or end the run.

Both are non-dumpable: a tool's subprocess (same uid) cannot read their memory, environment
or descriptors through /proc or ptrace. Inside the worker the script runs with restricted
builtins (`scope`), every attribute access rewritten through a checked accessor (`guards`),
and an audit hook that refuses process creation, code execution and imports made from the
script's own frames (`audit`). The harness runs exactly ONE request and terminates: a process
is never reused.

Importing this package has no side effects (no fork, no audit hook): the runners import
`UNRESTRICTED_ENV` from it, and the bash runner the tool loading and process plumbing.
"""

from __future__ import annotations

from .process import fork_worker, read_line, take_host_channel, worker_lines, worker_status
from .protocol import HARNESS_PROTOCOL, SECCOMP_ENV, SHARED_MACHINE_ENV, UNRESTRICTED_ENV
from .toolbox import ToolBox

__all__ = [
    "HARNESS_PROTOCOL",
    "SECCOMP_ENV",
    "SHARED_MACHINE_ENV",
    "UNRESTRICTED_ENV",
    "ToolBox",
    "fork_worker",
    "read_line",
    "take_host_channel",
    "worker_lines",
    "worker_status",
]
