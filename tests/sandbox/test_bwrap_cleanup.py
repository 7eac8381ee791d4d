"""A bubblewrap run leaves nothing behind: no per-run directory, no cgroup, however it ends."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from jazzmine.sandbox import Outcome, RunLimits, RunRequest, SandboxBuilder, make_runner
from jazzmine.sandbox.bwrap import RUN_DIR_PREFIX, stage_run_dir
from jazzmine.sandbox.cgroups import run_cgroup_dirs

from .bwrap_support import requires_bwrap
from .helpers import aged, collect, final
from .sample_tools import TEST_SANDBOX, make_registry

pytestmark = requires_bwrap

LIMITS = RunLimits(memory_mb=128, pids_limit=32, timeout_seconds=10)
STARTED = "emit_intermediate('started', 1)\n"


@pytest.fixture
def temp_root(monkeypatch) -> Iterator[Path]:
    """A temp dir of our own (readable by nobody, unlike pytest's), where only our runs count."""
    # Not named as a run directory (jazzmine-bwrap-*), which a run's staging may sweep.
    root = Path(tempfile.mkdtemp(prefix="jazzmine-suite-bwrap-"))
    root.chmod(0o755)
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def builder(tmp_path) -> SandboxBuilder:
    return SandboxBuilder(make_registry(), cache_dir=tmp_path / "cache")


@pytest.fixture(autouse=True)
def no_run_cgroup_left():
    before = set(run_cgroup_dirs())
    yield
    assert [path for path in run_cgroup_dirs() if path not in before] == []


def run_dirs(root: Path) -> list[str]:
    return sorted(path.name for path in root.glob(f"{RUN_DIR_PREFIX}*"))


def start(builder: SandboxBuilder, script: str, limits: RunLimits = LIMITS):
    runtime_dir, _wheels = stage_run_dir(builder, TEST_SANDBOX)
    request = RunRequest(script=script)
    return make_runner("bwrap", runtime_dir, limits, remove_runtime_dir=True).run(request)


async def test_a_run_that_ends_normally_removes_its_directory(builder, temp_root):
    events = await collect(start(builder, "emit_result(add(1, 2).data)\n"))
    assert final(events).outcome is Outcome.RESULT
    assert run_dirs(temp_root) == []


async def test_a_run_that_times_out_removes_its_directory(builder, temp_root):
    limits = RunLimits(memory_mb=128, pids_limit=32, timeout_seconds=1)
    events = await collect(start(builder, "while True:\n    pass\n", limits))
    assert final(events).outcome is Outcome.TIMEOUT
    assert run_dirs(temp_root) == []


async def test_a_sandbox_killed_from_outside_removes_its_directory(builder, temp_root):
    events = start(builder, STARTED + "while True:\n    pass\n")
    seen = [await anext(events)]
    assert run_dirs(temp_root) != []
    for pid in (run_cgroup_dirs()[0] / "cgroup.procs").read_text().split():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGKILL)
    seen += [event async for event in events]
    assert final(seen).outcome is Outcome.CONTAINER_CRASH
    assert run_dirs(temp_root) == []


async def test_a_run_its_caller_walks_away_from_removes_its_directory(builder, temp_root):
    events = start(builder, STARTED + "while True:\n    pass\n")
    await anext(events)
    await events.aclose()
    assert run_dirs(temp_root) == []


async def test_a_cancelled_run_removes_its_directory(builder, temp_root):
    started = asyncio.Event()

    async def consume() -> None:
        async for _event in start(builder, STARTED + "while True:\n    pass\n"):
            started.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert run_dirs(temp_root) == []


async def test_a_run_that_cannot_start_removes_its_directory(builder, temp_root):
    limits = RunLimits(memory_mb=128, pids_limit=-10, timeout_seconds=5)
    events = await collect(start(builder, "emit_result(1)\n", limits))
    assert final(events).outcome is Outcome.ENGINE_UNAVAILABLE
    assert run_dirs(temp_root) == []


def test_a_failed_staging_leaves_no_directory(builder, temp_root):
    with pytest.raises(Exception, match="no-such-sandbox"):
        stage_run_dir(builder, "no-such-sandbox")
    assert run_dirs(temp_root) == []


def test_staging_sweeps_directories_a_dead_worker_left(builder, temp_root):
    old = temp_root / f"{RUN_DIR_PREFIX}dead-worker"
    old.mkdir()
    os.utime(old, (0, 0))
    fresh = temp_root / f"{RUN_DIR_PREFIX}running-elsewhere"
    fresh.mkdir()
    runtime_dir, _wheels = stage_run_dir(builder, TEST_SANDBOX)
    assert run_dirs(temp_root) == sorted([fresh.name, runtime_dir.name])


def test_a_live_runs_directory_is_kept_however_old_and_swept_once_its_worker_died(
    builder, temp_root
):
    # Another worker's run, held as stage_run_dir holds its own, silent for a long time.
    worker = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\nfrom pathlib import Path\n"
         "from jazzmine.sandbox.workdirs import workdir_make\n"
         "print(workdir_make(sys.argv[1], parent=Path(sys.argv[2])), flush=True)\n"
         "time.sleep(60)\n", RUN_DIR_PREFIX, str(temp_root)],
        cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert worker.stdout is not None
        elsewhere = Path(worker.stdout.readline().strip())
        aged(elsewhere)
        mine, _wheels = stage_run_dir(builder, TEST_SANDBOX)
        assert elsewhere.exists()
        worker.kill()  # SIGKILL: it removes nothing
        worker.wait(timeout=10)
        again, _wheels = stage_run_dir(builder, TEST_SANDBOX)
        assert not elsewhere.exists()
        assert run_dirs(temp_root) == sorted([mine.name, again.name])  # ours are held
    finally:
        worker.kill()


async def test_a_run_lets_go_of_its_directory_when_it_ends(builder, temp_root):
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        events = await collect(start(builder, "emit_result(1)\n"))
        assert final(events).outcome is Outcome.RESULT
    assert len(os.listdir("/proc/self/fd")) == before
    assert run_dirs(temp_root) == []
