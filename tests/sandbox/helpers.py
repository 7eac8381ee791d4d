"""Small helpers shared by the sandbox tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

from jazzmine.sandbox import Event


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
