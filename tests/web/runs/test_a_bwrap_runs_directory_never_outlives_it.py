"""A bubblewrap run's staged directory goes when the run does, even if its sandbox never started.

Its runner removes it when it ends. A run cancelled (or failed) after its claim staged the
directory and before a runner took it would have left it, held by the worker for as long as
the worker lives (and, before the directories were held, for a day).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from jazzmine.sandbox import RunLimits, RunRequest
from jazzmine.sandbox.bwrap import RUN_DIR_PREFIX
from jazzmine.sandbox.workdirs import workdir_make
from jazzmine_web.runs.executor import _runtime_dir_remove
from jazzmine_web.runs.preparation import Prepared


def _claimed(runtime_dir: Path | None) -> asyncio.Future:
    claim = asyncio.get_running_loop().create_future()
    backend = "bwrap" if runtime_dir else "docker"
    target = f"bwrap:{runtime_dir}" if runtime_dir else "jazzmine/sandbox-x:1"
    claim.set_result(
        Prepared("r1", 1, backend, target, runtime_dir, RunLimits(), RunRequest(script=""))
    )
    return claim


async def test_a_claimed_runs_directory_is_removed_and_let_go(tmp_path):
    before = len(os.listdir("/proc/self/fd"))
    staged = workdir_make(RUN_DIR_PREFIX, parent=tmp_path)
    (staged / "harness.py").write_text("")
    claim = _claimed(staged)
    _runtime_dir_remove(claim)
    assert not staged.exists()
    assert len(os.listdir("/proc/self/fd")) == before  # its lock is let go
    _runtime_dir_remove(claim)  # the runner removed it first: nothing more to do


async def test_a_claim_with_no_directory_or_not_ours_removes_nothing(tmp_path):
    kept = tmp_path / "kept"
    kept.mkdir()
    _runtime_dir_remove(_claimed(None))
    loop = asyncio.get_running_loop()
    failed = loop.create_future()
    failed.set_exception(RuntimeError("the claim failed"))
    _runtime_dir_remove(failed)
    not_ours = loop.create_future()
    not_ours.set_result(None)
    _runtime_dir_remove(not_ours)
    assert kept.exists()
