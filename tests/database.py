"""Test-database helpers shared by the suites' conftest."""

from __future__ import annotations

import functools
import time

from django.db import OperationalError


def flush_again_after_a_deadlock(flush):
    """Wrap a test case's flush so that PostgreSQL's deadlock victim tries again.

    A transactional test ends by TRUNCATE-ing every table while the session's worker process
    may still be writing (a heartbeat, a run's last events) to two of them in the other
    order; PostgreSQL then cancels one side. When that side is the flush, the test after it
    found the rows this one left.
    """

    @functools.wraps(flush)
    def flush_again(self):
        for attempt in range(5):
            try:
                return flush(self)
            except OperationalError as exc:
                if "deadlock detected" not in str(exc) or attempt == 4:
                    raise
                time.sleep(0.2)

    return flush_again
