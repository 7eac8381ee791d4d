"""Per-run runtime directories: staged for one run, and what dead workers left removed."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..builder import SandboxBuilder

RUN_DIR_PREFIX = "jazzmine-bwrap-"
# A per-run directory this old outlived any run (deployment maxima are minutes, not a day).
STALE_RUN_DIR_SECONDS = 24 * 3600


def stage_run_dir(builder: SandboxBuilder, sandbox_name: str) -> Path:
    """Stage a sandbox's runtime into a new per-run directory; remove it if staging fails.

    Bind it with `BwrapRunner.bind(..., remove_runtime_dir=True)`: the run removes it.
    Directories far older than any run can last were left by a worker that died: removed here.
    """
    runtime_dir = Path(tempfile.mkdtemp(prefix=RUN_DIR_PREFIX))
    for stale in runtime_dir.parent.glob(f"{RUN_DIR_PREFIX}*"):
        with contextlib.suppress(OSError):
            if time.time() - stale.stat().st_mtime > STALE_RUN_DIR_SECONDS:
                shutil.rmtree(stale, ignore_errors=True)
    try:
        runtime_dir.chmod(0o755)  # the sandbox user (nobody) must read it
        builder.stage(sandbox_name, runtime_dir)
    except BaseException:
        shutil.rmtree(runtime_dir, ignore_errors=True)
        raise
    return runtime_dir
