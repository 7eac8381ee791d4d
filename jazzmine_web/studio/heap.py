"""A long-lived process's start-up heap, kept out of the garbage collector's full passes."""

from __future__ import annotations

import gc


def startup_heap_freeze() -> None:
    """Collect once, then leave what the process holds now out of every later collection.

    What a process holds once set up (modules, settings, URL and template tables) lives as long
    as it does, yet each full collection walks all of it: 65 ms here for a web process, with the
    event loop (every socket and request on it, or a worker's run events) standing still. What
    the process makes afterwards is collected as before.
    """
    gc.collect()
    gc.freeze()
