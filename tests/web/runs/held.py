"""A run executor held still, and a database that does not answer: for the patience tests."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from types import ModuleType

from django.db import OperationalError

from jazzmine_web.runs.executor import RunExecutor
from jazzmine_web.runs.models import Run, RunEvent
from jazzmine_web.runs.services import run_create


@contextlib.contextmanager
def executor_held() -> Iterator[tuple[RunExecutor, threading.Event]]:
    """A run executor whose loop waits until the event is set (the run does not start yet)."""
    executor = RunExecutor(pool_size=1)
    free = threading.Event()
    executor._loop.call_soon_threadsafe(free.wait, 30)
    try:
        yield executor, free
    finally:
        free.set()
        executor.shutdown()


def unanswered(
    monkeypatch, module: ModuleType, name: str, times: int, *, message: str, after: bool = False
) -> list[int]:
    """Make `module.<name>` raise as a database that stopped answering, `times` times.

    With `after`, the real call is made first (its write commits) and its answer is lost.
    """
    real = getattr(module, name)
    calls: list[int] = []

    def call(**kwargs):
        calls.append(1)
        if len(calls) <= times:
            if after:
                real(**kwargs)
            raise OperationalError(message)
        return real(**kwargs)

    monkeypatch.setattr(module, name, call)
    return calls


def queued(sandbox, member) -> Run:
    return run_create(sandbox=sandbox, user=member, body="emit_result(1)\n", start=False)


def events_of(run: Run) -> list[str]:
    return list(RunEvent.objects.filter(run=run).order_by("seq").values_list("type", flat=True))
