"""Small helpers shared by the sandbox tests."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

from jazzmine.sandbox import Event
from jazzmine.sandbox.workdirs import ABANDONED_AFTER_SECONDS


async def collect(events: AsyncIterator[Event]) -> list[Event]:
    """Drain a run and return its events."""
    return [event async for event in events]


def final(events: list[Event]) -> Event:
    """Return the exit event, checking that it is last and unique."""
    assert [e.type for e in events].count("exit") == 1, events
    assert events[-1].type == "exit", events
    return events[-1]


def of_type(events: list[Event], type_: str) -> list[Event]:
    return [e for e in events if e.type == type_]


def aged(path: Path, *, follow_symlinks: bool = True) -> None:
    """Date a working directory back past the age at which an unheld one counts as abandoned."""
    then = time.time() - ABANDONED_AFTER_SECONDS - 60
    os.utime(path, (then, then), follow_symlinks=follow_symlinks)
