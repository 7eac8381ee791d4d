"""A run executor that stops gives its DB thread's connection back.

On PostgreSQL a process's connections come from one pool (`JAZZMINE_DATABASE_POOL_SIZE`). The
executor's DB thread ended holding its connection, which no other thread could take again: a
process that started and stopped executors (a test session did) ran out of connections, and
its pages failed with PoolTimeout.
"""

from __future__ import annotations

import pytest
from django.conf import settings

from jazzmine_web.runs.executor import RunExecutor
from jazzmine_web.runs.models import Run

pytestmark = pytest.mark.django_db(transaction=True)


def test_executors_stopped_one_after_another_leave_the_pool_as_it_was():
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool") or {}
    for _ in range(pool.get("max_size", 3) + 2):  # more executors than the pool holds
        executor = RunExecutor(pool_size=0)
        try:
            assert executor._db.submit(Run.objects.count).result(timeout=30) == 0
        finally:
            executor.shutdown()
    assert Run.objects.count() == 0  # this thread still gets one at once
