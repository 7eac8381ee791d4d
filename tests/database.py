"""Test-database helpers shared by the suites' conftest."""

from __future__ import annotations

import functools
import time

from django.db import OperationalError

ATTEMPTS = 5


def _deadlock_in(exc: BaseException | None) -> bool:
    """Whether PostgreSQL's deadlock report is anywhere in the exception's chain.

    Django's `flush` command raises a `CommandError` *from* the database's error, so the
    deadlock is the cause of what reaches the test case, never the exception itself.
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OperationalError) and "deadlock detected" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def flush_again_after_a_deadlock(flush):
    """Wrap a test case's flush so that PostgreSQL's deadlock victim tries again.

    A transactional test ends by TRUNCATE-ing every table while the session's worker process
    may still be writing (a heartbeat, a run's last events, a webhook attempt) to two of them
    in the other order; PostgreSQL then cancels one side. When that side is the flush, the
    test after it found the rows this one left.
    """

    @functools.wraps(flush)
    def flush_again(self):
        for attempt in range(ATTEMPTS):
            try:
                return flush(self)
            except Exception as exc:
                if not _deadlock_in(exc) or attempt == ATTEMPTS - 1:
                    raise
                time.sleep(0.2)

    return flush_again
