"""A script that got past the validator finds no tool's own secret, anywhere it can look.

Tools used to run in the script's process: with full builtins (what a validator bypass
gives), `gc.get_objects()` found the harness's ToolBox and every tool-only secret in it, and
the run's request still lay in the heap. Now a tool with secrets of its own runs in a
process of its own, forked before the script, which alone is handed them (isolation.py).

The script below looks everywhere a process of the sandbox can: every object of its
interpreter, every readable byte of its address space, its environment, every descriptor it
holds, and every other process's environment and memory (`/proc/<pid>/mem` and
`process_vm_readv`). It never holds the secret itself (only a prefix and a digest), so a hit
is a leak. Through Docker and bubblewrap, as uid 65534 without capabilities, it must find the
tool's process and be refused its memory; as a plain process (root on a test machine, which
may read any process) only its own process is judged. Last, the tool is called, to show it
had its secret all along.
"""

from __future__ import annotations

import hashlib
import secrets
from pathlib import Path

import pytest

from jazzmine.sandbox import Outcome, RunRequest
from jazzmine.sandbox.runtime import stage_runtime

from .bwrap_support import requires_bwrap, runtime_dir  # noqa: F401 (a fixture)
from .helpers import collect, final, harness_events
from .sample_tools import TEST_SANDBOX, make_registry

SECRET = "tok-" + secrets.token_hex(12)
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()

SEARCH = """
import ctypes, gc, hashlib, os, re

PREFIX, DIGEST = b"tok-", "DIGEST_HERE"
PATTERN = re.compile(re.escape(PREFIX) + rb"[0-9a-f]{24}")


def hits_in(data):
    return sum(hashlib.sha256(m.group()).hexdigest() == DIGEST for m in PATTERN.finditer(data))


def text_hits(value):
    return isinstance(value, str) and hits_in(value.encode("utf-8", "replace")) > 0


def own_memory_hits():
    # Its own /proc/self/mem is root's (the harness is non-dumpable): read it directly, every
    # readable anonymous mapping, the heap and the stack (a file's would fault past its end).
    found = 0
    with open("/proc/self/maps") as handle:
        maps = handle.read().splitlines()
    for line in maps:
        fields = line.split()
        if "r" not in fields[1] or (len(fields) > 5 and fields[5] not in ("[heap]", "[stack]")):
            continue
        start, end = (int(x, 16) for x in fields[0].split("-"))
        found += hits_in(ctypes.string_at(start, end - start))
    return found


def memory_hits(pid):
    with open(f"/proc/{pid}/maps") as handle:
        maps = handle.read().splitlines()
    found = 0
    with open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if "r" not in perms or "[vvar]" in line or "[vsyscall]" in line:
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            tail = b""
            for at in range(start, end, 1 << 20):  # a piece at a time: the sandbox is small
                try:
                    mem.seek(at)
                    piece = tail + mem.read(min(1 << 20, end - at))
                except (OSError, ValueError, OverflowError):
                    break
                found += hits_in(piece)
                tail = piece[-27:]
    return found


class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def vm_read(pid):
    # The tool's process is forked from this one: this one's first mapping is there too.
    with open("/proc/self/maps") as handle:
        start = int(handle.readline().split("-")[0], 16)
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(4096)
    local = IoVec(ctypes.cast(buffer, ctypes.c_void_p), 4096)
    remote = IoVec(ctypes.c_void_p(start), 4096)
    done = libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    return "read" if done > 0 else os.strerror(ctypes.get_errno())


report = {"objects": 0, "memory": 0, "environ": 0, "descriptors": 0, "others": {}}
for thing in gc.get_objects():
    if isinstance(thing, dict):
        values = list(thing.keys()) + list(thing.values())
    elif isinstance(thing, (list, tuple, set, frozenset)):
        values = list(thing)
    else:
        values = [thing]
    report["objects"] += sum(text_hits(v) for v in values)
report["memory"] = own_memory_hits()
report["environ"] = sum(text_hits(v) for v in os.environ.values())
for fd in os.listdir("/proc/self/fd"):
    try:
        blocking = os.get_blocking(int(fd))
        os.set_blocking(int(fd), False)
    except (OSError, ValueError):
        continue
    try:
        report["descriptors"] += hits_in(os.read(int(fd), 1 << 20))
    except OSError:
        pass
    os.set_blocking(int(fd), blocking)
me = os.getpid()
for pid in os.listdir("/proc"):
    if not pid.isdigit() or int(pid) == me:
        continue
    seen = {}
    try:
        with open(f"/proc/{pid}/stat") as handle:
            seen["parent"] = int(handle.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        continue
    for what in ("environ", "mem"):
        try:
            if what == "environ":
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    seen[what] = hits_in(handle.read())
            else:
                seen[what] = memory_hits(pid)
        except OSError as exc:
            seen[what] = exc.strerror
    try:
        seen["vm_read"] = vm_read(int(pid))
    except OSError as exc:
        seen["vm_read"] = exc.strerror
    report["others"][pid] = seen
report["me"] = me
called = read_env("TOOL_TOKEN").data
report["tool_had_it"] = hashlib.sha256(str(called).encode()).hexdigest() == DIGEST
emit_result(report)
""".replace("DIGEST_HERE", DIGEST)


def request() -> RunRequest:
    return RunRequest(
        script=SEARCH,
        secrets={"TOOL_TOKEN": SECRET, "API_KEY": "shared-key"},
        allowed_tools=None,
        tool_secrets={"read_env": frozenset({"TOOL_TOKEN"})},
        unrestricted=True,
    )


def assert_found_nothing_of_its_own(report: dict) -> None:
    assert report["tool_had_it"], "the tool did not get its own secret"
    for where in ("objects", "memory", "environ", "descriptors"):
        assert report[where] == 0, (where, report)


def assert_refused_the_tools_process(report: dict) -> None:
    """Every other process: nothing found, and the tool's own process (a child) refused."""
    children = {pid: seen for pid, seen in report["others"].items()
                if seen["parent"] == report["me"]}  # fmt: skip
    assert children, report  # the tool's own process is there to be attacked
    for pid, seen in report["others"].items():
        for what in ("environ", "mem"):
            assert seen[what] in (0, "Permission denied"), (pid, what, seen)
    for seen in children.values():
        assert seen["environ"] == "Permission denied" and seen["mem"] == "Permission denied"
        assert seen["vm_read"] != "read", seen


def test_as_a_plain_process_the_script_holds_no_tools_secret(tmp_path: Path) -> None:
    runtime = stage_runtime(tmp_path / "runtime", make_registry().tools(TEST_SANDBOX))
    events = harness_events(runtime, request().to_line(30.0), unrestricted=True)
    (report,) = [e["data"] for e in events if e["type"] == "result"]
    assert_found_nothing_of_its_own(report)


@pytest.mark.docker
async def test_in_a_container_the_script_finds_it_nowhere(hostile_runner, image, limits) -> None:
    events = await collect(hostile_runner.bind(image, limits).run(request()))
    end = final(events)
    assert end.outcome is Outcome.RESULT, events
    (report,) = [e.data for e in events if e.type == "result"]
    assert_found_nothing_of_its_own(report)
    assert_refused_the_tools_process(report)


@requires_bwrap
async def test_under_bubblewrap_the_script_finds_it_nowhere(runtime_dir, limits) -> None:  # noqa: F811
    from jazzmine.sandbox.bwrap import BwrapRunner

    runner = BwrapRunner(allow_unrestricted=True).bind(runtime_dir, limits)
    events = await collect(runner.run(request()))
    end = final(events)
    assert end.outcome is Outcome.RESULT, events
    (report,) = [e.data for e in events if e.type == "result"]
    assert_found_nothing_of_its_own(report)
    assert_refused_the_tools_process(report)
