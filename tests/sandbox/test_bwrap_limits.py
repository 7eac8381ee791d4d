"""Memory, CPU and pids limits hold for a bubblewrap run as a whole, not per process."""

from __future__ import annotations

import pytest

from jazzmine.sandbox import Outcome, RunLimits
from jazzmine.sandbox import cgroups as cgroups_module
from jazzmine.sandbox.cgroups import run_cgroup_dirs

from .bwrap_support import requires_bwrap, run_unrestricted, runtime_dir
from .helpers import final, of_type

pytestmark = requires_bwrap
__all__ = ["runtime_dir"]  # the fixture, used by name

CHILDREN_HOARDING = """
import os, time
kids = []
for _ in range(6):
    pid = os.fork()
    if pid == 0:
        hoard = b'x' * ({mb} * 1024 * 1024)
        time.sleep(5)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
emit_result('all children held their memory')
"""


@pytest.fixture(autouse=True)
def no_run_cgroup_left():
    before = set(run_cgroup_dirs())
    yield
    assert [path for path in run_cgroup_dirs() if path not in before] == []


async def test_six_children_over_the_limit_are_killed_as_one_run(runtime_dir):
    limits = RunLimits(memory_mb=64, pids_limit=32, timeout_seconds=20)
    events = await run_unrestricted(runtime_dir, CHILDREN_HOARDING.format(mb=80), limits)
    assert final(events).outcome is Outcome.MEMORY_KILLED
    assert of_type(events, "result") == []


async def test_children_each_under_the_limit_count_together(runtime_dir):
    # 6 x 30 MiB: each child fits in 100 MiB alone, the run as a whole does not.
    limits = RunLimits(memory_mb=100, pids_limit=32, timeout_seconds=20)
    events = await run_unrestricted(runtime_dir, CHILDREN_HOARDING.format(mb=30), limits)
    assert final(events).outcome is Outcome.MEMORY_KILLED
    assert "100 MiB" in final(events).data["message"]


async def test_a_run_within_its_memory_finishes(runtime_dir):
    limits = RunLimits(memory_mb=256, pids_limit=32, timeout_seconds=20)
    events = await run_unrestricted(runtime_dir, CHILDREN_HOARDING.format(mb=10), limits)
    assert final(events).outcome is Outcome.RESULT


async def test_a_cpu_bound_script_gets_about_its_share_of_a_core(runtime_dir):
    script = (
        "import time\nstart, cpu = time.monotonic(), time.process_time()\n"
        "while time.monotonic() - start < 2.0:\n    pass\n"
        "emit_result((time.process_time() - cpu) / (time.monotonic() - start))\n"
    )
    limits = RunLimits(memory_mb=128, cpus=0.25, pids_limit=32, timeout_seconds=20)
    share = of_type(await run_unrestricted(runtime_dir, script, limits), "result")[0].data
    # Loose: 2 shared cores may give less than the quota, never much more.
    assert 0.02 < share < 0.4


async def test_processes_and_threads_together_stop_at_the_pids_limit(runtime_dir):
    script = (
        "import os, threading, time\nmade = refused = 0\n"
        "for i in range(100):\n"
        "    try:\n"
        "        if i % 2:\n"
        "            threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
        "        elif os.fork() == 0:\n            time.sleep(30)\n            os._exit(0)\n"
        "        made += 1\n"
        "    except (OSError, RuntimeError):\n        refused += 1\n"
        "emit_result([made, refused])\n"
    )
    limits = RunLimits(memory_mb=256, pids_limit=20, timeout_seconds=20)
    made, refused = of_type(await run_unrestricted(runtime_dir, script, limits), "result")[0].data
    assert made < 20 and refused > 0


async def test_a_recursive_fork_bomb_ends_and_leaves_no_process(runtime_dir):
    script = (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    limits = RunLimits(memory_mb=128, pids_limit=16, timeout_seconds=2)
    events = await run_unrestricted(runtime_dir, script, limits)
    assert final(events).outcome is Outcome.TIMEOUT
    # no_run_cgroup_left: the cgroup could be removed, so no process of the run survived.


async def test_a_run_whose_cgroup_cannot_be_limited_does_not_start(runtime_dir):
    limits = RunLimits(memory_mb=128, pids_limit=-10, timeout_seconds=5)
    events = await run_unrestricted(runtime_dir, "emit_result('ran unlimited')\n", limits)
    assert final(events).outcome is Outcome.ENGINE_UNAVAILABLE
    assert "cgroup" in final(events).data["message"]
    assert of_type(events, "result") == []


async def test_a_machine_without_cgroups_refuses_the_run(runtime_dir, monkeypatch, tmp_path):
    empty = tmp_path / "mounts"
    empty.write_text("proc /proc proc rw 0 0\n")
    monkeypatch.setattr(cgroups_module, "PROC_MOUNTS", empty)
    events = await run_unrestricted(runtime_dir, "emit_result('ran unlimited')\n", RunLimits())
    assert final(events).outcome is Outcome.ENGINE_UNAVAILABLE
    assert "cgroup" in final(events).data["message"]
