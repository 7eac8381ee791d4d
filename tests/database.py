"""Test-database helpers shared by the suites' conftest."""

from __future__ import annotations

import functools
import threading
import time
import weakref
from typing import Any

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


class PoolHolders:
    """Which thread took each connection out of psycopg's pool, so ended threads give theirs back.

    A connection goes back to the pool only when the thread that took it closes it. The app's
    threads do (a request's at `request_finished`, `database_sync_to_async`'s after each call,
    the playground's own threads as they end); a test's do not always: a helper thread that
    read a row, an `asyncio.to_thread` of a test's event loop, whose executor ends with the
    loop. Each such thread kept one of the test process's ten connections for good, and a
    thousand tests later a live server's request waited 20 s for one and failed, far from
    the test that lost it. What an ended thread held is handed back after each test (the pool
    rolls back whatever it left open).
    """

    def __init__(self) -> None:
        self.held: dict[int, tuple[Any, Any, weakref.ref[threading.Thread]]] = {}
        self.lock = threading.Lock()

    def install(self) -> None:
        from psycopg_pool import ConnectionPool

        getconn, putconn = ConnectionPool.getconn, ConnectionPool.putconn
        holders = self

        def tracked_getconn(pool: Any, timeout: float | None = None) -> Any:
            conn = getconn(pool, timeout)
            with holders.lock:
                holders.held[id(conn)] = (pool, conn, weakref.ref(threading.current_thread()))
            return conn

        def tracked_putconn(pool: Any, conn: Any) -> None:
            with holders.lock:
                holders.held.pop(id(conn), None)
            putconn(pool, conn)

        ConnectionPool.getconn = tracked_getconn  # type: ignore[method-assign]
        ConnectionPool.putconn = tracked_putconn  # type: ignore[method-assign]
        self.putconn = putconn

    def return_what_ended_threads_held(self) -> int:
        """Hand back the connections of threads that ended; return how many."""
        with self.lock:
            ended = [
                (key, pool, conn)
                for key, (pool, conn, thread) in self.held.items()
                if (alive := thread()) is None or not alive.is_alive()
            ]
            for key, _pool, _conn in ended:
                del self.held[key]
        for _key, pool, conn in ended:
            self.putconn(pool, conn)
        return len(ended)
