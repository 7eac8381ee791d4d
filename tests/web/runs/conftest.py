"""Fixtures of the run suites."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from jazzmine_web.runs import executor as executor_module
from jazzmine_web.runs.executor import RunExecutor
from tests.web.runs.held import executor_held


@pytest.fixture
def held_executor(monkeypatch) -> Iterator[tuple[RunExecutor, threading.Event]]:
    """A run executor held still until its event is set, retrying the database every 50 ms."""
    monkeypatch.setattr(executor_module, "DATABASE_RETRY_SECONDS", 0.05)
    with executor_held() as executor_and_switch:
        yield executor_and_switch
