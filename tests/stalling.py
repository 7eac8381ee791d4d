"""A server that accepts connections and never answers: a package index that has stalled.

A download from it prints nothing while pip waits (here up to PIP_DEFAULT_TIMEOUT, retried),
which is what a worker's stop has to cut through without a line to check between.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def stalled_index() -> Iterator[str]:
    """Yield the URL of an index on loopback that takes every request and answers none."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    closing = threading.Event()

    def accept() -> None:
        while not closing.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return  # closed: the test is over
            held.append(connection)  # read nothing, say nothing

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/simple"
    finally:
        closing.set()
        listener.close()
        for connection in held:
            connection.close()
        thread.join(timeout=5)


def processes_naming(text: str) -> list[str]:
    """Return the command lines of this machine's processes that contain `text`."""
    return [cmdline for cmdline in _cmdlines() if text in cmdline]


def pips_downloading(package: str) -> list[str]:
    """Return the command lines of the `pip download`s (and their tethers) naming `package`.

    Not whatever else names it: the process that asked for the download, say.
    """
    return [line for line in processes_naming(package) if "-m pip download" in line]


def _cmdlines() -> Iterator[str]:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            raw = (entry / "cmdline").read_bytes()
            if raw:
                yield raw.replace(b"\0", b" ").decode(errors="replace")
