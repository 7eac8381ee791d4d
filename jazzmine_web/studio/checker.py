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
caller refuses what it was asked to do (fail closed). One that ran out of time is killed; the
texts waiting behind it did nothing wrong, so each is handed once to a new process, and fails
the same way (`CheckerUnavailable`) only if that one is stopped under it too. No public function
lets a future's `CancelledError` out: raised from a view's thread, asgiref made it the request's
own cancellation, and Django sent no answer at all.

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
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

# Texts this long or longer are read in the checker process.
PROCESS_THRESHOLD_CHARS = 20_000
# The longest one attempt at a call may take, waiting in line included: far above the few
# seconds the biggest text any path accepts takes, and short enough that a text made to read
# slowly holds the checker for nobody long. A call displaced by another's timeout gets a
# second attempt (`_ATTEMPTS`), so it may wait up to about twice this.
CHECK_TIMEOUT_SECONDS = 30.0
# Attempts of a call whose process was stopped under it for another call's time (`_Displaced`).
_ATTEMPTS = 2

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
        # Pools `stop` killed for a call out of time: the others waiting on one are displaced.
        # Weak: a pool dropped is forgotten here too.
        self._stopped: weakref.WeakSet[concurrent.futures.ProcessPoolExecutor] = weakref.WeakSet()

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
        # Marked before the kill: the calls waiting on it learn of the kill at once, and must
        # find it marked to know that their own text was not why.
        self._stopped.add(late)
        # The executor offers no public way to stop a task that runs; its processes by pid.
        processes = list((getattr(late, "_processes", None) or {}).values())
        for process in processes:
            with contextlib.suppress(Exception):
                process.kill()
        self.forget(late)

    def was_stopped(self, pool: concurrent.futures.ProcessPoolExecutor) -> bool:
        """Tell whether `stop` killed this pool (a call on it ran out of time)."""
        return pool in self._stopped

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


class _Displaced(Exception):
    """A call's process was stopped under it because another call ran out of time.

    Its own text is not to blame: it was waiting in line, never handed to the process, or
    handed but not yet read when the process was killed for the text ahead of it. It is
    tried again on a new process; never raised out of this module.
    """


def _late() -> CheckerUnavailable:
    return CheckerUnavailable(f"reading it took longer than {CHECK_TIMEOUT_SECONDS:g} seconds")


def _displaced() -> CheckerUnavailable:
    return CheckerUnavailable(
        "the checker process was stopped before it had read it, as a text ahead of it took"
        f" longer than {CHECK_TIMEOUT_SECONDS:g} seconds"
    )


def _lost(
    process: _CheckerProcess, pool: concurrent.futures.ProcessPoolExecutor, *, cancelled: bool
) -> Exception:
    """Drop a pool that failed a call; return what to raise for the call.

    `_Displaced` unless the call's own text may be why the pool failed: then `CheckerUnavailable`.
    """
    process.forget(pool)
    # A cancelled call was still waiting in line: only a shutdown (`forget`'s) cancels a future,
    # and only one not yet handed to the process, so its text was never read. A pool `stop`
    # killed was killed for the call out of time: there is one line and one timeout, so the
    # text being read is the one whose time runs out first (threads' scheduling aside), and
    # the calls it breaks were handed to the process behind it, unread.
    if cancelled or process.was_stopped(pool):
        return _Displaced()
    # A process that died by itself (killed, out of memory) may have died of this very text:
    # tried again, one text could take down a second process.
    return CheckerUnavailable(_STOPPED)


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
    # A displaced call is tried again, on the new process its displacement started, with a
    # whole `CHECK_TIMEOUT_SECONDS` of its own: it did nothing wrong, and refusing it would let
    # one slow text refuse every check in line behind it (an agent's small script behind a
    # member's huge page). What was left of its first wait would not do: it has waited in line
    # for nearly all of it, and running out of time again would stop the new process under
    # the others tried again. Once only: a second displacement is refused like the late text.
    for attempt in range(1, _ATTEMPTS + 1):
        try:
            return _read(process, fn, args, kwargs)
        except _Displaced:
            if attempt == _ATTEMPTS:
                raise _displaced() from None
    raise AssertionError("unreachable")


def _read(
    process: _CheckerProcess,
    fn: Callable[..., T],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> T:
    """One attempt at a call in the process: its result, `CheckerUnavailable` or `_Displaced`."""
    pool, future = process.submit(fn, args, kwargs)
    try:
        return future.result(timeout=CHECK_TIMEOUT_SECONDS)
    except concurrent.futures.TimeoutError:
        process.stop(pool)
        raise _late() from None
    except concurrent.futures.CancelledError:
        raise _lost(process, pool, cancelled=True) from None
    except concurrent.futures.BrokenExecutor:
        raise _lost(process, pool, cancelled=False) from None


async def checked_off_loop(chars: int, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Return `fn(*args, **kwargs)` without blocking the event loop: `checked`, for async code.

    A small text is read on a thread; a big one in the checker process.
    """
    if chars < PROCESS_THRESHOLD_CHARS:
        return await asyncio.to_thread(fn, *args, **kwargs)
    # Tried again once when displaced, with a whole timeout of its own: as in `_called`.
    for attempt in range(1, _ATTEMPTS + 1):
        try:
            return await _read_off_loop(fn, args, kwargs)
        except _Displaced:
            if attempt == _ATTEMPTS:
                raise _displaced() from None
    raise AssertionError("unreachable")


async def _read_off_loop(fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
    """`_read`, awaited: its result, `CheckerUnavailable` or `_Displaced`."""
    task = asyncio.current_task()
    cancels = task.cancelling() if task is not None else 0
    # Starting the process (the first time) and handing it the text both block: on a thread.
    pool, future = await asyncio.to_thread(_checker.submit, fn, args, kwargs)
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_SECONDS):
            return await asyncio.wrap_future(future)
    except TimeoutError:
        _checker.stop(pool)
        raise _late() from None
    except concurrent.futures.BrokenExecutor:
        raise _lost(_checker, pool, cancelled=False) from None
    except asyncio.CancelledError:
        # The wrapper is cancelled when the future is, and this task would take that for its
        # own cancellation. One of the task itself (its socket closed) goes on up: it cancels
        # the future as well, so only a new cancel request on the task tells them apart.
        if (task is not None and task.cancelling() > cancels) or not future.cancelled():
            raise
        raise _lost(_checker, pool, cancelled=True) from None


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
