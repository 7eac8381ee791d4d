"""A web process killed outright takes its helper processes with it.

Each web process starts helpers the first time it reads or colours a big text: a forkserver,
and the helper it forks. The forkserver leaves once the web process's end closes its pipe,
but the helper inherits that pipe's other end: after a SIGKILL of the web process (an OOM
kill, a supervisor's last resort) both stayed, re-parented to init, for ever. The helper now
watches the web process itself.

The "web process" here is a small Python process that uses the checker as a web process
does (it has no Django request to serve; the helpers are the same).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.waiting import wait_until
from tests.web.checker import descendants

ROOT = Path(__file__).resolve().parents[2]

# Reads one big text in the checker, prints the pids of the processes below it, and waits.
WEB = """
import os, sys, time
import django
django.setup()
from jazzmine.language import parses_as_python
from jazzmine_web.studio import checker
text = "x = 1\\n" * 40_000
assert checker.checked(len(text), parses_as_python, text)
print("ready", flush=True)
time.sleep(600)
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.timeout(120)
def test_the_checker_helpers_end_when_their_web_process_is_killed() -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "jazzmine_web.settings",
           "PYTHONPATH": str(ROOT)}  # fmt: skip
    web = subprocess.Popen(
        [sys.executable, "-c", WEB], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    helpers: set[int] = set()
    try:
        assert web.stdout is not None and web.stdout.readline().strip() == "ready"
        helpers = descendants(web.pid)
        assert helpers, "the checker started no process"
        web.send_signal(signal.SIGKILL)
        web.wait(timeout=10)
        wait_until(
            lambda: not any(alive(pid) for pid in helpers),
            timeout=15,
            message=f"helpers left behind: {[p for p in helpers if alive(p)]}",
        )
    finally:
        if web.poll() is None:
            web.kill()
        for pid in helpers | descendants(web.pid):  # the ones left behind are init's by now
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
