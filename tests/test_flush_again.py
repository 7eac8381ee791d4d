"""The test cases' flush tries again only when PostgreSQL chose it as a deadlock's victim.

These go through Django's real teardown and `flush` command, which wraps the database's
error in a `CommandError`; only the database call underneath is made to fail.
"""

from __future__ import annotations

import pytest
from django.core.management.base import CommandError
from django.db import OperationalError, connection
from django.test import TransactionTestCase

from tests.database import flush_again_after_a_deadlock

pytestmark = pytest.mark.django_db(transaction=True)


class _Case(TransactionTestCase):
    __test__ = False  # only torn down here, never collected as a test

    def runTest(self):  # a case needs a test method to be built; none is run
        pass


def teardown_failing_with(monkeypatch, *errors):
    """The real teardown, with the database refusing the flush's SQL once per error."""
    calls = []
    real = connection.ops.execute_sql_flush

    def execute_sql_flush(sql_list):
        calls.append(1)
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]
        return real(sql_list)

    monkeypatch.setattr(connection.ops, "execute_sql_flush", execute_sql_flush)
    unwrapped = getattr(TransactionTestCase._fixture_teardown, "__wrapped__")
    return flush_again_after_a_deadlock(unwrapped), calls


def test_a_deadlock_victim_flushes_again(monkeypatch):
    teardown, calls = teardown_failing_with(
        monkeypatch, OperationalError("deadlock detected\nDETAIL: Process 1 waits for ...")
    )
    teardown(_Case())
    assert len(calls) == 2


def test_any_other_error_is_raised_at_once(monkeypatch):
    teardown, calls = teardown_failing_with(
        monkeypatch, OperationalError('relation "x" does not exist')
    )
    with pytest.raises(CommandError, match="couldn't be flushed") as raised:
        teardown(_Case())
    assert "does not exist" in str(raised.value.__cause__)
    assert len(calls) == 1


def test_it_gives_up_after_five_deadlocks(monkeypatch):
    teardown, calls = teardown_failing_with(
        monkeypatch, *[OperationalError("deadlock detected")] * 6
    )
    with pytest.raises(CommandError):
        teardown(_Case())
    assert len(calls) == 5


def test_the_suites_teardown_is_the_wrapped_one():
    assert getattr(TransactionTestCase._fixture_teardown, "__wrapped__", None) is not None
