"""Under `scripts/run.sh`, a process of the app that dies is started again; Ctrl-C stops all.

honcho stops every process as soon as one ends: a worker killed by the OOM killer took the
web pages and beat down with it, and nothing started them again. Each Procfile line runs
under `scripts/keep-running.sh`, which starts its command again unless it was asked to stop.
Here a Procfile of the same shape runs a long sleeper beside a command that dies at once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]
KEEP = ROOT / "scripts" / "keep-running.sh"
HONCHO = Path(sys.executable).parent / "honcho"


def starts(path: Path) -> int:
    return len(path.read_text().split()) if path.exists() else 0


def test_a_process_that_dies_is_started_again_and_the_others_stay_up(tmp_path: Path) -> None:
    crashes, sleeps = tmp_path / "crashes", tmp_path / "sleeps"
    procfile = tmp_path / "Procfile"
    procfile.write_text(
        f"steady: bash {KEEP} sh -c 'echo $$ >> {sleeps}; exec sleep 600'\n"
        f"crashing: bash {KEEP} sh -c 'echo $$ >> {crashes}; exit 3'\n"
    )
    honcho = subprocess.Popen(
        [str(HONCHO), "--procfile", str(procfile), "--app-root", str(tmp_path), "start"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        # 1 s, then 2 s: two more starts within 5 s, the steady one started once.
        wait_until(lambda: starts(crashes) >= 3, timeout=15, message="not started again")
        assert honcho.poll() is None, "honcho stopped everything"
        assert starts(sleeps) == 1
        sleeper = int(sleeps.read_text().split()[0])
        os.kill(sleeper, 0)  # still running
        # Ctrl-C: honcho asks each to stop; none is started again, and all end.
        honcho.send_signal(signal.SIGINT)
        output = honcho.communicate(timeout=20)[0].decode()
        assert starts(sleeps) == 1, output
        time.sleep(0.5)
        try:
            os.kill(sleeper, 0)
        except ProcessLookupError:
            pass
        else:
            raise AssertionError(f"the sleeper outlived Ctrl-C:\n{output}")
        assert "starting it again" in output
    finally:
        if honcho.poll() is None:
            os.killpg(honcho.pid, signal.SIGKILL)


def test_a_command_asked_to_stop_is_not_started_again(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    wrapper = subprocess.Popen(
        ["bash", str(KEEP), "sh", "-c", f"echo $$ >> {runs}; trap 'exit 7' TERM; sleep 600 & wait"],
        start_new_session=True,
    )  # fmt: skip
    wait_until(lambda: starts(runs) == 1, timeout=10)
    os.killpg(wrapper.pid, signal.SIGTERM)  # as honcho stops a process: its whole group
    # It ends once the command has (drained: its own exit, or the stop's when bash could not
    # read that), and never starts it again.
    assert wrapper.wait(timeout=10) in (7, 128 + signal.SIGTERM)
    time.sleep(1.5)
    assert starts(runs) == 1
