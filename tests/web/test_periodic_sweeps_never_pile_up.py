"""A periodic sweep that no worker took within its own period is dropped, not queued up.

While no worker runs (a night's outage), beat goes on sending: without an expiry the
messages piled up (37 after 75 s) and all ran at once when a worker came back, each doing
the same work as the last. Each entry expires after its own period: the next one does it.
"""

from __future__ import annotations

from jazzmine_web.celery import app


def test_every_periodic_entry_expires_within_its_period() -> None:
    schedule = app.conf.beat_schedule
    assert schedule, "beat has nothing to send"
    for name, entry in schedule.items():
        period = float(entry["schedule"])
        expires = entry.get("options", {}).get("expires")
        assert expires is not None and 0 < expires <= period, (name, entry)
