"""Run a build's helper command (pip, the base-image script) line by line, killable at once."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from ..interrupts import Interrupt

TETHER = Path(__file__).with_name("tether.py")


def run_logged(
    command: list[str],
    on_line: Callable[[str], None],
    *,
    interrupt: Interrupt | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> int:
    """Run `command`, hand each line of its output to `on_line`, return its exit code.

    The command runs in a session of its own. When `interrupt` fires, or `on_line` raises,
    the whole session is killed there and then: a download that prints nothing for minutes
    (a large wheel, a stalled index) is not waited on, and nothing it started outlives the
    build. A fired interrupt then raises `WorkInterrupted` with its reason.

    The command is tethered to this process (`tether.py`): should this process die without
    a chance to clean up (SIGKILL, the OOM killer), the session is killed all the same.
    """
    stop = interrupt or Interrupt()
    # Our end of the tether is never written and never passed on (os.pipe's ends are not
    # inherited): while the command runs, only this process's death closes it.
    watched, held = os.pipe()
    try:
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", str(TETHER), str(watched), "--", *command],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",  # a tool's odd byte is shown, never a build failure of its own
            bufsize=1,
            cwd=cwd,
            env=env,
            start_new_session=True,
            pass_fds=(watched,),
        )
    except BaseException:
        os.close(held)
        raise
    finally:
        os.close(watched)
    assert process.stdout is not None

    def kill(_reason: str = "") -> None:
        # Only while its leader is unreaped: after that its id may name someone else.
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)

    try:
        with stop.during(kill):
            for line in process.stdout:
                on_line(line.rstrip())
    except BaseException:
        kill()
        raise
    finally:
        process.stdout.close()
        code = process.wait()
        os.close(held)
    stop.check()
    return code
