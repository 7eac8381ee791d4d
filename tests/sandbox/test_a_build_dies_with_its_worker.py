"""A build's helper commands and working directories do not outlive a worker killed outright.

A worker that is SIGKILLed (or taken by the OOM killer) runs no clean-up of its own. Before,
pip went on downloading until its own timeout, tied to no one, and the half-downloaded wheels
and the staged image context stayed on the host for good. Here the "worker" is a real
process that starts the command as a build does, and is then killed with SIGKILL.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from jazzmine.interrupts import Interrupt, WorkInterrupted
from jazzmine.sandbox.commands import TETHER
from jazzmine.sandbox.wheels import PipIndexes, download_wheels
from jazzmine.sandbox.workdirs import abandoned_remove, workdir_held
from tests.sandbox.helpers import aged
from tests.stalling import pips_downloading, processes_naming, stalled_index
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
REASON = "the test is over"

# The stand-in worker: runs one helper command the way a build does, until it is killed.
COMMAND_WORKER = (
    "import sys\n"
    "from jazzmine.sandbox.commands import run_logged\n"
    "run_logged(sys.argv[1:], print)\n"
)
DOWNLOAD_WORKER = (
    "import sys\n"
    "from pathlib import Path\n"
    "from jazzmine.sandbox.wheels import PipIndexes, download_wheels\n"
    "download_wheels([sys.argv[1]], Path(sys.argv[2]), print,\n"
    "                indexes=PipIndexes(index_url=sys.argv[3]))\n"
)


def _worker(code: str, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _killed(worker: subprocess.Popen[bytes]) -> float:
    worker.kill()  # SIGKILL: nothing of its own runs after this
    worker.wait(timeout=10)
    return time.monotonic()


def _family(marker: str) -> list[str]:
    # The command and its child (the stand-in and the tether name the marker too)
    return [
        line for line in processes_naming(marker)
        if "os.fork()" in line and "tether.py" not in line and "run_logged" not in line
    ]  # fmt: skip


def _downloads(cache: Path) -> list[Path]:
    return sorted((cache / "wheels").glob("download-*"))


def test_a_helper_command_and_its_children_die_with_the_worker_that_started_it():
    marker = f"jazzmine-orphan-{uuid.uuid4().hex}"
    # A parent that forks a child, both silent for a minute, each in the stand-in's build.
    family = [sys.executable, "-c", "import os, time\nos.fork()\ntime.sleep(60)\n", marker]
    worker = _worker(COMMAND_WORKER, *family)
    try:
        wait_until(lambda: len(_family(marker)) == 2, timeout=30, message="not started")
        killed = _killed(worker)
        wait_until(lambda: not processes_naming(marker), timeout=3, message="they outlived it")
        assert time.monotonic() - killed < 3
    finally:
        worker.kill()


def test_pip_dies_with_its_worker_and_the_next_download_removes_what_it_left(tmp_path):
    package = f"jazzmine-orphan-{uuid.uuid4().hex[:12]}"
    with stalled_index() as url:
        worker = _worker(DOWNLOAD_WORKER, f"{package}==1.0", str(tmp_path), url)
        try:
            wait_until(lambda: pips_downloading(package), timeout=30, message="pip never started")
            # Silent now, waiting on the index: it writes nothing that could fail on its own.
            time.sleep(1.5)
            killed = _killed(worker)
        finally:
            worker.kill()
        wait_until(lambda: not pips_downloading(package), timeout=3, message="pip outlived it")
        assert time.monotonic() - killed < 3
        (left,) = _downloads(tmp_path)  # its worker had no chance to remove it
        aged(left)

        # The next download (stopped by its own switch, once under way) removes it first.
        interrupt = Interrupt()
        threading.Timer(3.0, interrupt.fire, args=(REASON,)).start()
        try:
            download_wheels(
                [f"{package}-next==1.0"], tmp_path, lambda _line: None,
                indexes=PipIndexes(index_url=url), interrupt=interrupt,
            )  # fmt: skip
        except WorkInterrupted:
            pass
    assert not left.exists()
    assert _downloads(tmp_path) == []


def test_a_download_under_way_is_never_removed_however_old(tmp_path):
    with workdir_held("download-", parent=tmp_path) as busy:
        aged(busy)  # silent for long: a stalled index, a huge wheel
        assert abandoned_remove("download-", parent=tmp_path) == []
        assert busy.exists()


def test_a_directory_nobody_holds_is_removed_only_once_it_is_past_its_creation(tmp_path):
    fresh = tmp_path / "download-fresh"
    fresh.mkdir()  # made, not locked yet: what a build sees between the two
    assert abandoned_remove("download-", parent=tmp_path) == []
    assert fresh.exists()
    aged(fresh)
    (fresh / "half.whl").write_bytes(b"partial")
    aged(fresh)
    assert abandoned_remove("download-", parent=tmp_path) == [fresh]
    assert not fresh.exists()
    other = tmp_path / "wheels-of-someone-else"
    other.mkdir()
    aged(other)
    assert abandoned_remove("download-", parent=tmp_path) == []
    assert other.exists()


def test_a_working_directory_is_held_by_another_process_until_it_dies(tmp_path):
    # The lock is the process's, not a thread's or a file object's: another process sees
    # the directory in use, then abandoned the moment its holder is killed.
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\nfrom pathlib import Path\n"
         "from jazzmine.sandbox.workdirs import workdir_held\n"
         "with workdir_held('download-', parent=Path(sys.argv[1])) as p:\n"
         "    print(p, flush=True)\n    time.sleep(60)\n", str(tmp_path)],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        held = Path(holder.stdout.readline().strip())
        aged(held)
        assert abandoned_remove("download-", parent=tmp_path) == []
        assert held.exists()
        _killed(holder)
    finally:
        holder.kill()
    assert abandoned_remove("download-", parent=tmp_path) == [held]


def test_the_sweep_follows_no_link_and_leaves_what_is_not_its_own(tmp_path):
    # The image contexts live in the shared temporary directory: anyone can make a name
    # that looks like ours there, or a link to a directory of someone else's.
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious").write_text("keep me")
    link = tmp_path / "jazzmine-build-link"
    link.symlink_to(victim, target_is_directory=True)
    theirs = tmp_path / "jazzmine-build-theirs"
    theirs.mkdir()
    (theirs / "their-file").write_text("theirs")
    os.chown(theirs, 65534, 65534)
    os.mkfifo(tmp_path / "jazzmine-build-fifo")  # opening it to read would wait for a writer
    for path in (victim, theirs):
        aged(path)
    aged(link, follow_symlinks=False)
    assert abandoned_remove("jazzmine-build-", parent=tmp_path) == []
    assert (victim / "precious").read_text() == "keep me"
    assert link.is_symlink() and (theirs / "their-file").exists()
    assert (tmp_path / "jazzmine-build-fifo").exists()


def test_a_tether_started_without_a_session_of_its_own_kills_only_its_command():
    # Whoever starts it, the tether's kill reaches its command and never its starter.
    marker = f"jazzmine-untethered-{uuid.uuid4().hex}"
    watched, held = os.pipe()
    tether = subprocess.Popen(
        [sys.executable, "-I", "-S", str(TETHER), str(watched), "--",
         sys.executable, "-c", "import time\ntime.sleep(60)\n", marker],
        pass_fds=(watched,),
    )  # fmt: skip
    os.close(watched)
    try:
        wait_until(lambda: len(processes_naming(marker)) == 2, timeout=30, message="not started")
        os.close(held)  # as when its worker dies
        assert tether.wait(timeout=5) == -9
        wait_until(lambda: not processes_naming(marker), timeout=3, message="it outlived it")
    finally:
        tether.kill()
    # This test's process, which started it in its own session, is still here to say so.
