"""The test cases' flush tries again only when PostgreSQL chose it as a deadlock's victim."""

from __future__ import annotations

import pytest
from django.db import OperationalError

from tests.database import flush_again_after_a_deadlock


def flaky(*errors):
    calls = []

    def flush(_case):
        calls.append(1)
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]
        return "flushed"

    return flush, calls


def test_a_deadlock_victim_flushes_again():
    flush, calls = flaky(OperationalError("deadlock detected\nDETAIL: ..."))
    assert flush_again_after_a_deadlock(flush)(object()) == "flushed"
    assert len(calls) == 2


def test_any_other_error_is_raised_at_once():
    flush, calls = flaky(OperationalError("relation does not exist"))
    with pytest.raises(OperationalError, match="does not exist"):
        flush_again_after_a_deadlock(flush)(object())
    assert len(calls) == 1


def test_it_gives_up_after_five_deadlocks():
    flush, calls = flaky(*[OperationalError("deadlock detected")] * 6)
    with pytest.raises(OperationalError):
        flush_again_after_a_deadlock(flush)(object())
    assert len(calls) == 5
