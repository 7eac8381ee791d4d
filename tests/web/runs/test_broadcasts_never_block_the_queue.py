"""Many pages asking workers for something at once (prewarm, cancel) never jam the queue."""

from __future__ import annotations

import threading

from jazzmine_web.celery import app
from jazzmine_web.runs.lifecycle import sandbox_prewarm


def test_thirty_concurrent_prewarms_leave_the_queue_usable() -> None:
    threads = [
        threading.Thread(target=sandbox_prewarm, kwargs={"sandbox_id": n}, daemon=True)
        for n in range(30)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    assert not any(t.is_alive() for t in threads), "broadcasts are stuck on each other"
    sent = threading.Thread(target=lambda: app.send_task("runs.reap"), daemon=True)
    sent.start()
    sent.join(timeout=10)
    assert not sent.is_alive(), "a task could not be queued after the broadcasts"
