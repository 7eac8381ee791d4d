"""Keep a build's helper command alive no longer than the process that started it.

Run as a file, not imported: `python -I -S tether.py FD -- COMMAND...` (the standard library
only, so it starts in a few milliseconds from any directory).

A worker killed outright (SIGKILL, the OOM killer) cleans nothing up: a download it started
would go on until pip's own timeout, tied to nothing, and a base image's bootstrap to its end.
The tether stands between the worker and the command, leads the command's session, and reads
one end of a pipe whose other end only the worker holds. Nothing is ever written to it: the
read returns only when the kernel closes the worker's end, which it does when the worker
dies, however it dies. The tether then kills its whole session, the command's children with
it. A worker that died before the tether started is seen the same way (its end is already
closed).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: tether.py FD -- COMMAND...", file=sys.stderr)
        return 2
    watched = int(argv[1])
    if os.getsid(0) != os.getpid():
        # Started without a session of its own: make one, so that the kill below reaches the
        # command and its children, never whoever started the tether.
        os.setsid()
    try:
        command = subprocess.Popen(argv[3:])  # the pipe's end is not passed on (close_fds)
    except OSError as exc:
        print(f"cannot run {argv[3]}: {exc}", file=sys.stderr)
        return 127  # as a shell says it

    def exit_with_command() -> None:
        code = command.wait()
        # A command killed by a signal exits as a shell reports it (128 + its number).
        os._exit(128 - code if code < 0 else code)

    threading.Thread(target=exit_with_command, daemon=True).start()
    while os.read(watched, 1):  # b"" once the worker's end is closed: it is gone
        pass
    os.killpg(0, signal.SIGKILL)  # this session's group: the command, its children and us
    return 137  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv))
