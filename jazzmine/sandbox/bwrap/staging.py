"""Per-run runtime directories: staged for one run, and what dead workers left removed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..workdirs import workdir_make, workdir_remove

if TYPE_CHECKING:
    from ..builder import SandboxBuilder

RUN_DIR_PREFIX = "jazzmine-bwrap-"


def stage_run_dir(builder: SandboxBuilder, sandbox_name: str) -> tuple[Path, list[str]]:
    """Stage a sandbox's runtime into a new per-run directory; remove it if staging fails.

    Return the directory and the wheel files unpacked in it (`SandboxBuilder.stage`).

    Bind it with `BwrapRunner.bind(..., remove_runtime_dir=True)`: the run removes it. It is
    held while it lives (`workdirs`), so the directories of runs whose worker died are
    removed by the next run's staging, here.
    """
    runtime_dir = workdir_make(RUN_DIR_PREFIX)
    try:
        runtime_dir.chmod(0o755)  # the sandbox user (nobody) must read it
        wheels = builder.stage(sandbox_name, runtime_dir)
    except BaseException:
        workdir_remove(runtime_dir)
        raise
    return runtime_dir, wheels
