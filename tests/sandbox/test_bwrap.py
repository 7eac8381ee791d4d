"""The bubblewrap backend: same harness and protocol, its own walls, explicit in every event."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jazzmine.sandbox import Outcome, RunLimits, RunRequest, make_runner
from jazzmine.sandbox.bwrap import BwrapRunner
from jazzmine.sandbox.identity import FIRST_UID, LAST_UID

from .bwrap_support import requires_bwrap, runtime_dir
from .helpers import collect, final, of_type

pytestmark = requires_bwrap
__all__ = ["runtime_dir"]  # the fixture, used by name


LIMITS = RunLimits(memory_mb=128, pids_limit=32, timeout_seconds=10, max_output_bytes=200_000)


async def run(runtime_dir: Path, script: str, limits: RunLimits = LIMITS, **request) -> list:
    runner = BwrapRunner(allow_unrestricted=True).bind(runtime_dir, limits)
    return await collect(runner.run(RunRequest(script=script, **request)))


async def test_the_backend_is_chosen_explicitly(runtime_dir):
    runner = make_runner("bwrap", runtime_dir, LIMITS)
    events = await collect(runner.run(RunRequest(script="emit_result(add(1, 2).data)\n")))
    assert final(events).outcome is Outcome.RESULT
    assert final(events).data["backend"] == "bwrap"
    with pytest.raises(ValueError, match="unknown sandbox backend"):
        make_runner("none", runtime_dir, LIMITS)


async def test_a_happy_run_streams_and_names_its_backend(runtime_dir):
    events = await run(
        runtime_dir, "emit_intermediate('a', add(1, 2).data)\nemit_result(slow_double(2).data)\n"
    )
    assert [e.type for e in events] == ["intermediate", "result", "exit"]
    assert events[1].data == 4
    assert final(events).data["backend"] == "bwrap"


async def test_no_network_no_host_files_no_writes_outside_tmp(runtime_dir):
    script = (
        "import os, socket\nout = {'uid': os.getuid()}\n"
        "try:\n    socket.create_connection(('1.1.1.1', 80), timeout=2)\n    out['net'] = 'up'\n"
        "except OSError as e:\n    out['net'] = type(e).__name__\n"
        "out['shadow'] = os.path.exists('/etc/shadow')\nout['work'] = os.path.exists('/work')\n"
        "try:\n    open('/opt/jazzmine/x', 'w')\n    out['write'] = 'ok'\n"
        "except OSError as e:\n    out['write'] = type(e).__name__\n"
        "open('/tmp/scratch', 'w').write('fine')\n"
        "emit_result(out)\n"
    )
    events = await run(runtime_dir, script, unrestricted=True)
    result = of_type(events, "result")[0].data
    uid = result.pop("uid")
    # As root the sandbox drops to a uid of its own (`identity`); else it is the worker's.
    assert FIRST_UID <= uid <= LAST_UID if os.geteuid() == 0 else uid == os.geteuid()
    assert result == {"net": "PermissionError", "shadow": False, "work": False, "write": "OSError"}


async def test_an_infinite_loop_times_out(runtime_dir):
    limits = RunLimits(memory_mb=128, pids_limit=32, timeout_seconds=1.0)
    events = await run(runtime_dir, "while True:\n    pass\n", limits)
    assert final(events).outcome is Outcome.TIMEOUT


async def test_a_memory_bomb_is_killed_at_the_memory_limit(runtime_dir):
    events = await run(runtime_dir, "hoard = []\nwhile True:\n    hoard.append('x' * 10_000_000)\n")
    assert final(events).outcome is Outcome.MEMORY_KILLED


async def test_a_fork_bomb_hits_the_process_limit(runtime_dir):
    script = (
        "import os, time\nforked = refused = 0\n"
        "for _ in range(200):\n"
        "    try:\n"
        "        if os.fork() == 0:\n            time.sleep(30)\n            os._exit(0)\n"
        "        forked += 1\n"
        "    except OSError:\n        refused += 1\n"
        "emit_result([forked, refused])\n"
    )
    forked, refused = of_type(await run(runtime_dir, script, unrestricted=True), "result")[0].data
    assert forked < 32 and refused > 0
