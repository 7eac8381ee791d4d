"""Working directories of builds and runs: held while in use, removed once their process died.

A build fills directories it removes when it ends (the download's staging directory, the
image's context), and so does a bubblewrap run (its staged runtime). A worker killed outright
(SIGKILL, the OOM killer) removes nothing: its half-downloaded wheels and its staged runtimes
would stay on the host for good. So a directory is locked (`flock`) for as long as it is in
use. The kernel drops the lock when its process dies, however it dies, and a build or run
that makes a directory of the same kind removes the ones nobody holds any more (once past
`ABANDONED_AFTER_SECONDS`). `scripts/lib/workdirs.sh` does the same for the base image's
bootstrap, a shell script whose chroot mounts need letting go first.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

# A directory exists unlocked only between its creation and its lock, microseconds apart.
# An hour, not a minute: a worker of an earlier release on the same host (a rolling upgrade)
# does not lock its directories, and its runs and builds end well within the hour.
ABANDONED_AFTER_SECONDS = 3600.0


@contextlib.contextmanager
def workdir_held(prefix: str, *, parent: Path | None = None) -> Iterator[Path]:
    """Make a new directory (`prefix`*), held while the block runs and removed after it.

    The block may move it away (a finished download into the cache): then nothing is removed.
    """
    path = workdir_make(prefix, parent=parent)
    try:
        yield path
    finally:
        workdir_remove(path)


def workdir_make(prefix: str, *, parent: Path | None = None) -> Path:
    """Make a new directory (`prefix`*) held until `workdir_remove`, for one no block spans.

    The directories of the same kind that dead processes left are removed first. A
    bubblewrap run's directory is made as the run is prepared and removed by its runner.
    """
    parent = Path(parent or tempfile.gettempdir())
    abandoned_remove(prefix, parent=parent)
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    held = os.open(path, os.O_RDONLY | os.O_DIRECTORY)  # not inherited by what we start
    with _held_lock:
        _held[path] = held
    fcntl.flock(held, fcntl.LOCK_EX)  # a sweeper's probe holds it for microseconds at most
    return path


def workdir_remove(path: Path) -> None:
    """Remove a directory `workdir_make` made (if still there), and let go of it."""
    shutil.rmtree(path, ignore_errors=True)
    with _held_lock:
        held = _held.pop(path, None)
    if held is not None:
        os.close(held)  # the lock goes with it, even if the directory was moved away


# {directory: its open descriptor, which holds the lock}
_held: dict[Path, int] = {}
_held_lock = threading.Lock()


def abandoned_remove(prefix: str, *, parent: Path) -> list[Path]:
    """Remove the directories `prefix`* in `parent` that no living process holds.

    Only real directories of this process's user: `parent` may be the shared temporary
    directory, where anyone can make a name that looks like ours (or a link to theirs).
    """
    removed = []
    for path in parent.glob(f"{prefix}*"):
        try:
            probe = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue  # moved or removed meanwhile, a link, or not a directory
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            status = os.fstat(probe)
            ours = status.st_uid == os.getuid()
            if ours and time.time() - status.st_mtime > ABANDONED_AFTER_SECONDS:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
        except BlockingIOError:
            continue  # in use
        finally:
            os.close(probe)
    return removed
