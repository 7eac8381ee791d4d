"""The checker process: where big untrusted texts are parsed, away from the web process's GIL.

`ast.parse` (and the walks of the validator and the review gate after it) holds the GIL for its
whole run: a 200 KB script costs hundreds of milliseconds a parse, and a script is parsed
several times on its way to a run. On a thread that still stalls every socket of the web
process, anyone's. So a text of `PROCESS_THRESHOLD_CHARS` or more is read in one separate
process, started on first use and replaced when it dies; waiting for it holds no GIL. Smaller
texts (what typing sends, most scripts) are read where they are: a millisecond or two. Code
coloured to be shown (`coloured`) has a second process of the same kind, so that no check
waits in line behind a page.

Nothing falls back to reading a big text here: a checker process that dies (killed, out of
memory) or takes longer than `CHECK_TIMEOUT_SECONDS` raises `CheckerUnavailable`, and the
caller refuses what it was asked to do (fail closed). One that ran out of time is killed, and
the texts queued behind it fail the same way; the next big text starts a new process.

Django-free on purpose: the process imports only the modules of the functions it is handed.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import multiprocessing
import os
import select
import threading
from collections.abc import Callable
from typing import Any, TypeVar

# Texts this long or longer are read in the checker process.
PROCESS_THRESHOLD_CHARS = 20_000
# The longest one call may take, waiting in line included: far above the few seconds the
# biggest text any path accepts takes, and short enough that a text made to read slowly
# holds the checker for nobody long.
CHECK_TIMEOUT_SECONDS = 30.0

T = TypeVar("T")

_PRELOAD: set[str] = {__name__}


class CheckerUnavailable(RuntimeError):
    """The checker process stopped, or ran out of time, before it read a text: nothing was read.

    Its text is a sentence a person can be shown as it is.
    """

    def __init__(self, why: str) -> None:
        self.why = why
        super().__init__(
            f"The script could not be checked: {why}. Nothing was run or stored; try again."
        )


def preload(module: str) -> None:
    """Name a module whose functions are handed to the checker: it is loaded as it starts."""
    _PRELOAD.add(module)


def _die_with(parent: int) -> None:
    """End this helper when the web process that started it ends, however it ends.

    Its parent is the forkserver, which leaves once the web process's end closes its pipe;
    but this helper inherits that pipe's other end, so after a SIGKILL of the web process
    the two waited on each other, re-parented to init, for ever. A pidfd wakes at the web
    process's exit itself (a pid polled could be taken again by another process).
    """
    try:
        watched = os.pidfd_open(parent)
    except ProcessLookupError:
        os._exit(0)  # gone already
    except (OSError, AttributeError):
        return  # a kernel without pidfds: the pipe's end is all there is

    def wait() -> None:
        select.select([watched], [], [])
        os._exit(0)

    threading.Thread(target=wait, name="die-with-the-web-process", daemon=True).start()


class _CheckerProcess:
    """One lazily started process for big texts, replaced if it dies."""

    def __init__(self) -> None:
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def pool(self) -> concurrent.futures.ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                # forkserver, not fork: the web process has threads (channel layer, run worker).
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(sorted(_PRELOAD))
                self._pool = concurrent.futures.ProcessPoolExecutor(
                    1, mp_context=context, initializer=_die_with, initargs=(os.getpid(),)
                )
                atexit.register(self._pool.shutdown, wait=False, cancel_futures=True)
            return self._pool

    def forget(self, broken: concurrent.futures.ProcessPoolExecutor) -> None:
        """Drop a pool that cannot read any more: the next text starts a new process."""
        with self._lock:
            if self._pool is broken:
                self._pool = None
        atexit.unregister(broken.shutdown)
        broken.shutdown(wait=False, cancel_futures=True)

    def stop(self, late: concurrent.futures.ProcessPoolExecutor) -> None:
        """Kill the process of a pool that ran out of time (its text holds it), and drop it."""
        # The executor offers no public way to stop a task that runs; its processes by pid.
        processes = list((getattr(late, "_processes", None) or {}).values())
        for process in processes:
            with contextlib.suppress(Exception):
                process.kill()
        self.forget(late)

    def submit(
        self, fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[concurrent.futures.ProcessPoolExecutor, concurrent.futures.Future[T]]:
        """Hand a call to the process; a pool found broken (its text not yet sent) is replaced once."""
        for attempt in (1, 2):
            pool = self.pool()
            try:
                return pool, pool.submit(fn, *args, **kwargs)
            except (concurrent.futures.BrokenExecutor, RuntimeError):
                # Broken while idle (killed), or shut down by another caller that saw it break.
                self.forget(pool)
                if attempt == 2:
                    raise CheckerUnavailable(_STOPPED) from None
        raise AssertionError("unreachable")


_checker = _CheckerProcess()
# Colouring code to show it has a process of its own: a page's 200,000 characters keep one
# busy for seconds, and a check (a run, a save) must not wait behind that in line.
_colourer = _CheckerProcess()
_STOPPED = "the checker process stopped before it had read it (killed, or out of memory)"


def _late() -> CheckerUnavailable:
    return CheckerUnavailable(f"reading it took longer than {CHECK_TIMEOUT_SECONDS:g} seconds")


def checked(chars: int, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Return `fn(*args, **kwargs)`: here for a text under the threshold, else in the checker.

    For code off the event loop (a view's thread, `database_sync_to_async`): the wait holds
    no GIL. `chars` is the length of the text `fn` reads; `fn` and its arguments must pickle
    without Django (plain strings, lists, module-level functions).
    """
    return _called(_checker, chars, fn, args, kwargs)


def coloured(chars: int, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`checked`, in the process that colours code to show it, not the one that checks."""
    return _called(_colourer, chars, fn, args, kwargs)


def _called(
    process: _CheckerProcess,
    chars: int,
    fn: Callable[..., T],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> T:
    if chars < PROCESS_THRESHOLD_CHARS:
        return fn(*args, **kwargs)
    if _on_event_loop():
        raise RuntimeError("a big text is read off the event loop: use `checked_off_loop`")
    pool, future = process.submit(fn, args, kwargs)
    try:
        return future.result(timeout=CHECK_TIMEOUT_SECONDS)
    except concurrent.futures.TimeoutError:
        process.stop(pool)
        raise _late() from None
    except concurrent.futures.BrokenExecutor:
        process.forget(pool)
        raise CheckerUnavailable(_STOPPED) from None


async def checked_off_loop(chars: int, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Return `fn(*args, **kwargs)` without blocking the event loop: `checked`, for async code.

    A small text is read on a thread; a big one in the checker process.
    """
    if chars < PROCESS_THRESHOLD_CHARS:
        return await asyncio.to_thread(fn, *args, **kwargs)
    # Starting the process (the first time) and handing it the text both block: on a thread.
    pool, future = await asyncio.to_thread(_checker.submit, fn, args, kwargs)
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_SECONDS):
            return await asyncio.wrap_future(future)
    except TimeoutError:
        _checker.stop(pool)
        raise _late() from None
    except concurrent.futures.BrokenExecutor:
        _checker.forget(pool)
        raise CheckerUnavailable(_STOPPED) from None


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
