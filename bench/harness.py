"""The harness's own share of a warm dispatch, beside another checkout's and a bare pipe.

Run: .venv/bin/python bench/harness.py BASE_TREE [runs]   (bubblewrap, no Docker needed)

A warm sandbox is a harness that has loaded its tools and said `ready`; a dispatch writes
one request line and waits for the first event. In a container that trip also crosses the
engine's attach stream (about 0.1 ms here); this takes the harness out of the container, with
no walls, to time what the harness itself does: relay → worker hand-over, reading the
request, compiling the script, running it to its first `emit_log`, and the relay's check.

Each tree (this one and BASE_TREE) stages the runtime of an empty sandbox with its own code;
then the two harnesses are started alternately, each waits `ready`, and one request is
timed: request → first event and request → exit. `cat` on the same pipes is the floor.
The ratio is this tree's median over BASE_TREE's. A second table times a script that calls a
trivial tool 1000 times, so what each tool call costs the harness shows as its difference.
Each harness runs as in a sandbox (bubblewrap, without its seccomp filter or cgroup): pid 1's
child, a read-only view of the host, and a /tmp and a /dev/shm of its own, empty, as a
container has; around every tool call the harness lists and sweeps its writable places.
Before, it ran in a bare pid namespace on the host's writable mounts: it swept the host's
"/" and /tmp (a thousand entries each here), which was 6 of a call's 6.2 ms, and left a
directory of its own in each (the harness now refuses tool calls there). A third and a
fourth do the same
with the same tool given a secret of its own, which (from harness protocol 3) makes it run in
a process of its own: the fork before the script, and a pipe's round trip per call. Not a
test.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Staging a tree (`--stage TREE`) imports that tree's code, never this one's: its harness is
# what gets copied. Before, the base tree was staged with this tree's harness, so the two
# columns timed the same code.
sys.path.insert(0, sys.argv[2] if sys.argv[1:2] == ["--stage"] else str(ROOT))

from bench.common import pct  # noqa: E402
from jazzmine.core.tools import ToolResponse  # noqa: E402

SCRIPT = "emit_log('hi')\nemit_result(1)\n"
CALLS = 1000
# The host read-only, a /tmp and a /dev/shm of its own (the runtimes are staged elsewhere),
# and the relay as pid 1: what the harness needs to take itself for a sandbox.
AS_SANDBOX = [
    "bwrap", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
    "--tmpfs", "/tmp", "--tmpfs", "/dev/shm", "--unshare-pid", "--as-pid-1", "--die-with-parent",
]  # fmt: skip
CALLING = f"emit_log('hi')\nfor _ in range({CALLS}):\n    ping(n=1)\nemit_result(1)\n"
OWN = {"ping": {"PING_TOKEN": "a-secret-of-its-own"}}


def protocol_of(tree: Path) -> int:
    """Return the harness protocol a tree's code speaks."""
    text = (tree / "jazzmine/sandbox/harness/protocol.py").read_text()
    return int(text.split("HARNESS_PROTOCOL = ", 1)[1].split()[0])


def request(script: str, protocol: int, own: dict[str, dict[str, str]] | None = None) -> bytes:
    """What a host sends a harness of `protocol`; `own`: secrets of a tool's own, by tool."""
    own = own or {}
    payload = {
        "script": script,
        "body_offset": 0,
        "secrets": {},
        "allowed_tools": None,
        "tool_secrets": {tool: sorted(values) for tool, values in own.items()},
        # As a web run sends it: each call's arguments checked, its data copied both ways.
        "tool_parameters": {"ping": ["n"]},
    }
    if protocol < 3:  # one line, every secret in it
        payload["secrets"] = {n: v for values in own.values() for n, v in values.items()}
        return json.dumps(payload).encode()
    payload["isolated_tools"] = sorted(own)
    return json.dumps(payload).encode() + b"\n" + json.dumps({"tool_secrets": own}).encode()


def ping(n: int) -> ToolResponse:  # the calls table's tool: little more than a tool can do
    return ToolResponse(success=True, data={"n": n, "items": [1, 2, 3]})


def stage(tree: Path, into: Path) -> None:
    """Child mode: stage an empty sandbox's runtime with `tree`'s code into `into`."""
    assert Path(sys.modules["jazzmine"].__file__).resolve().is_relative_to(tree.resolve())
    from jazzmine.core.tools import SandboxConfig, ToolParameter, ToolRegistry
    from jazzmine.sandbox import SandboxBuilder

    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name="bench"))
    registry.register_function(ping, description="Answer.", parameters=[ToolParameter("n", "int")],
                               dependencies=[], secrets=["PING_TOKEN"], sandbox="bench")  # fmt: skip
    SandboxBuilder(registry).stage("bench", into)


def one(command: list[str], line: bytes) -> tuple[float, float]:
    """Start a harness (or `cat`), wait until it is ready, time one request to its end."""
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env={**os.environ, "TMPDIR": "/dev/shm"},
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    if command != ["cat"]:
        process.stdout.readline()  # ready
    time.sleep(0.05)  # as in a pool: the request comes to an idle sandbox
    started = time.perf_counter()
    process.stdin.write(line + b"\n")
    process.stdin.flush()
    line = process.stdout.readline()
    first = time.perf_counter() - started
    if command == ["cat"]:
        process.stdin.close()
        process.stdout.read()
    else:  # to the run's end (its `exit`), not the relay's linger after it
        while line and b'"type":"exit"' not in line:
            line = process.stdout.readline()
    ended = time.perf_counter() - started
    process.stdin.close()
    process.wait()
    return first * 1000, ended * 1000


def main() -> None:
    if sys.argv[1] == "--stage":
        stage(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    base, runs = Path(sys.argv[1]).resolve(), int(sys.argv[2]) if len(sys.argv) > 2 else 40
    # Not in /tmp, which each harness's own mount hides.
    with tempfile.TemporaryDirectory(prefix="jazzmine-bench-", dir="/var/tmp") as tmp:
        roots = {}
        for name, tree in (("base", base), ("this", ROOT)):
            roots[name] = Path(tmp) / name
            roots[name].mkdir()
            here = Path(__file__).resolve()
            subprocess.run([sys.executable, str(here), "--stage", str(tree), str(roots[name])],
                           check=True)  # fmt: skip
        # Each harness in a pid namespace of its own, as in a container: after every tool call
        # it looks for processes the tool left (reaper.py), and the host's hundreds would be
        # most of what the calls table measured; and in places of its own (see above).
        commands = {
            name: [*AS_SANDBOX, "python3", "-I", str(root / "harness.py"), str(root)]
            for name, root in roots.items()
        }
        commands["cat (the floor)"] = ["cat"]
        protocols = {"base": protocol_of(base), "this": protocol_of(ROOT), "cat (the floor)": 3}
        trees = {n: commands[n] for n in roots}
        tables = {
            "": (commands, lambda name: request(SCRIPT, protocols[name])),
            f", {CALLS} tool calls": (trees, lambda name: request(CALLING, protocols[name])),
            ", the tool holding a secret of its own": (
                trees, lambda name: request(SCRIPT, protocols[name], OWN)),
            f", {CALLS} calls of the tool holding a secret of its own": (
                trees, lambda name: request(CALLING, protocols[name], OWN)),
        }  # fmt: skip
        for title, (chosen, line_for) in tables.items():
            figures: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n in chosen}
            for turn in range(runs):
                order = list(chosen) if turn % 2 == 0 else list(reversed(chosen))
                for name in order:
                    first, ended = one(chosen[name], line_for(name))
                    figures[name][0].append(first)
                    figures[name][1].append(ended)
            report(f"{runs} interleaved dispatches each{title}", figures)


def report(title: str, figures: dict[str, tuple[list[float], list[float]]]) -> None:
    print(f"\n(ms, {title})     request → first event   request → exit")
    for name, (first, ended) in figures.items():
        print(f"  {name:<22} p50 {pct(first, .5):6.2f}  p95 {pct(first, .95):6.2f}"
              f"      p50 {pct(ended, .5):6.2f}  p95 {pct(ended, .95):6.2f}")  # fmt: skip
    for index, label in ((0, "request → first event"), (1, "request → exit")):
        ratio = statistics.median(figures["this"][index]) / statistics.median(
            figures["base"][index]
        )
        print(f"ratio this / base, {label} p50: {ratio:.2f}x")


if __name__ == "__main__":
    main()
