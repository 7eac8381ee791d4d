"""Run a build's helper command (pip, the base-image script) line by line, killable at once."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

from ..interrupts import Interrupt


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
    """
    stop = interrupt or Interrupt()
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",  # a tool's odd byte is shown, never a build failure of its own
        bufsize=1,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
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
    stop.check()
    return code
