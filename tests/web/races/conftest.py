"""The review fixtures, and a way to make calls at the same moment from several threads."""

from __future__ import annotations

import threading
import traceback

from django.db import connection

from tests.web.reviews.conftest import (  # noqa: F401  (fixtures)
    api,
    issued,
    no_worker,
    reviewer,
    reviewer_client,
)


def at_once(*calls, timeout=60):
    """Run each call on its own thread, released together; return (results, errors) in order."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)
    errors = [None] * len(calls)

    def go(i, fn):
        try:
            barrier.wait()
            results[i] = fn()
        except BaseException as exc:
            errors[i] = exc
            exc._tb_text = traceback.format_exc()
        finally:
            connection.close()

    threads = [threading.Thread(target=go, args=(i, fn)) for i, fn in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    return results, errors
