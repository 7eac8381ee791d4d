"""/dev/shm is sized like the run's tmpfs, in a container as in bubblewrap.

`tmpfs_mb` is what a sandbox's page says a run may write. Docker gave every container a
64 MiB /dev/shm whatever it said (a sandbox of 8 MiB wrote 64 there), as bubblewrap's
unsized /dev/shm once did.
"""

from __future__ import annotations

import pytest

from jazzmine.sandbox import RunLimits

from .both_backends import sandbox
from .bwrap_support import runtime_dir
from .helpers import of_type

__all__ = ["runtime_dir", "sandbox"]  # the fixtures, used by name

FILL = (
    "import os\n"
    "stat = os.statvfs('/dev/shm')\n"
    "written = 0\n"
    "try:\n"
    "    with open('/dev/shm/fill', 'wb') as f:\n"
    "        for _ in range(100):\n"
    "            f.write(b'x' * (1024 * 1024))\n"
    "            f.flush()\n"
    "            written += 1\n"
    "except OSError as e:\n"
    "    stopped = type(e).__name__\n"
    "else:\n"
    "    stopped = None\n"
    "emit_result({'size_mb': stat.f_blocks * stat.f_frsize // (1024 * 1024),\n"
    "             'written_mb': written, 'stopped': stopped})\n"
)


@pytest.mark.parametrize("tmpfs_mb", [8, 96])
async def test_dev_shm_is_the_size_of_the_runs_tmpfs(sandbox, tmpfs_mb) -> None:
    limits = RunLimits(memory_mb=256, pids_limit=32, timeout_seconds=15, tmpfs_mb=tmpfs_mb)
    events = await sandbox.run(FILL, limits, unrestricted=True)  # a script may not import os
    results = [e.data for e in of_type(events, "result")]
    assert len(results) == 1, events[-3:]
    out = results[0]
    assert out["size_mb"] == tmpfs_mb, out
    assert out["written_mb"] <= tmpfs_mb and out["stopped"] == "OSError", out
