"""`scripts/run.sh` starts only when its deployment does not run already and its port is free.

A second run.sh printed "Jazzmine Studio on http://...", then started a web process that
retried its taken port for good, a second worker under the first one's name and a second
beat. The checks run.sh sources (`scripts/instance-lock.sh`) are run here as it runs them.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from pathlib import Path

from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]


def checked(var_dir: Path, port: int, then: str = "echo started") -> subprocess.Popen:
    env = {**os.environ, "JAZZMINE_VAR_DIR": str(var_dir), "JAZZMINE_HOST": "127.0.0.1",
           "JAZZMINE_PORT": str(port)}  # fmt: skip
    return subprocess.Popen(
        ["bash", "-c", f"set -euo pipefail; source scripts/instance-lock.sh; {then}"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_second_instance_of_one_deployment_is_refused_until_the_first_ends(tmp_path) -> None:
    held = tmp_path / "held"
    first = checked(tmp_path / "var", free_port(), then=f"touch {held}; exec sleep 600")
    try:
        wait_until(held.exists, timeout=20, message="the first instance never started")
        second = checked(tmp_path / "var", free_port())
        out, err = second.communicate(timeout=20)
        assert second.returncode == 1 and "started" not in out
        assert "Jazzmine Studio already runs on" in err and "JAZZMINE_VAR_DIR" in err
        # Another deployment (its own folder) starts beside it.
        beside = checked(tmp_path / "other", free_port())
        assert beside.communicate(timeout=20)[0].strip() == "started"
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # a kill -9 leaves no lock behind
        first.wait(timeout=10)
    again = checked(tmp_path / "var", free_port())
    assert again.communicate(timeout=20)[0].strip() == "started"


def test_a_taken_port_is_refused_naming_it(tmp_path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        taken = checked(tmp_path / "var", port)
        out, err = taken.communicate(timeout=20)
    assert taken.returncode == 1 and "started" not in out
    assert f"127.0.0.1:{port} is taken" in err and "JAZZMINE_PORT" in err
    # Once it is free (its last connection's state left behind), it starts.
    free = checked(tmp_path / "var", port)
    assert free.communicate(timeout=20)[0].strip() == "started"
