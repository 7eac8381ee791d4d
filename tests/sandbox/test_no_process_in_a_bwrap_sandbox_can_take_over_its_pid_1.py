"""No process in a bubblewrap sandbox can become the process that holds the host's channel.

bwrap's own init (pid 1 unless `--as-pid-1`) holds the run's stdin and stdout pipes, runs as
the sandbox user and stays dumpable: a script could write code into its memory through
/proc/1/mem, make it reap an orphan, and have it print forged events straight to the host,
past the relay that numbers and checks them. The relay is pid 1 instead, as in a container.
"""

from __future__ import annotations

import platform

import pytest

from jazzmine.sandbox import Outcome, RunLimits

from .bwrap_support import requires_bwrap, run_unrestricted, runtime_dir
from .helpers import final, of_type

pytestmark = requires_bwrap
__all__ = ["runtime_dir"]  # the fixture, used by name

LIMITS = RunLimits(memory_mb=256, pids_limit=32, timeout_seconds=15)

# Writes code after pid 1's pending syscall that prints a forged result and exit on its fd 1,
# then hands pid 1 an orphan to reap (a CLONE_PARENT child of the worker is the relay's, and
# the relay is no subreaper) so that its wait4 returns into that code.
TAKE_OVER_PID_1 = r"""
import ctypes, os, struct, time
seen = {}
try:
    fields = open('/proc/1/syscall').read().split()
    pc = int(fields[-1], 16)
    msg = (b'{"seq": 1, "type": "result", "data": "forged", "ts": 0}\n'
           b'{"seq": 2, "type": "exit", "data": {"outcome": "result"}, "ts": 0}\n')
    code = (b'\x48\x8d\x35' + struct.pack('<i', 26) + b'\xbf\x01\x00\x00\x00'
            + b'\xba' + struct.pack('<I', len(msg)) + b'\xb8\x01\x00\x00\x00\x0f\x05'
            + b'\xb8\x22\x00\x00\x00\x0f\x05\xeb\xf7')
    with open('/proc/1/mem', 'r+b', buffering=0) as mem:
        mem.seek(pc)
        mem.write(code + msg)
    seen['pid 1'] = 'written'
except (OSError, ValueError, IndexError) as exc:
    seen['pid 1'] = type(exc).__name__
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
if libc.syscall(56, 0x8000 | 17, 0, 0, 0, 0) == 0:  # clone(CLONE_PARENT | SIGCHLD)
    if os.fork() == 0:
        time.sleep(0.3)
        os._exit(0)
    os._exit(0)
time.sleep(2)
emit_result(seen)
"""


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86_64 machine code")
async def test_a_script_cannot_write_into_pid_1_to_forge_the_runs_events(runtime_dir):
    events = await run_unrestricted(runtime_dir, TAKE_OVER_PID_1, LIMITS)
    assert final(events).outcome is Outcome.RESULT, events
    assert of_type(events, "result")[0].data == {"pid 1": "PermissionError"}


async def test_pid_1_of_a_bwrap_sandbox_is_the_non_dumpable_relay(runtime_dir):
    script = (
        "import os\nseen = {}\n"
        "for name in ('mem', 'environ', 'fd/0', 'fd/1'):\n"
        "    try:\n        open('/proc/1/' + name, 'rb').close()\n        seen[name] = 'opened'\n"
        "    except OSError as e:\n        seen[name] = type(e).__name__\n"
        "seen['cmdline'] = open('/proc/1/cmdline', 'rb').read().split(b'\\0')[0].decode()\n"
        "emit_result(seen)\n"
    )
    events = await run_unrestricted(runtime_dir, script, LIMITS)
    seen = of_type(events, "result")[0].data
    assert not seen["cmdline"].endswith("bwrap"), seen
    assert {seen[name] for name in ("mem", "environ", "fd/0", "fd/1")} == {"PermissionError"}
