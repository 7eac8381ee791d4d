"""Redis (the broker and the channel layer) stopped and started again under a running deployment.

Stopped as `redis-cli shutdown nosave` stops it: the queue it held is gone. Nothing is
restarted after it; the database has every run and event.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tests.waiting import wait_until

from .outages import Deployment, deployment_of_its_own, ticking

pytestmark = [pytest.mark.docker, pytest.mark.topology]


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    with deployment_of_its_own(tmp_path_factory.mktemp("redis-outage")) as deployment:
        yield deployment


def test_a_run_going_through_a_redis_restart_ends_with_every_event_at_its_watcher(deployment):
    submitted = deployment.submit(ticking(5))
    assert submitted.status_code == 201, submitted.text
    submission_id = submitted.json()["id"]
    seen: list[int] = []
    ended: list[dict] = []

    def watch() -> None:
        for message in deployment.stream(submission_id):
            if message["type"] == "event":
                seen.append(message["event"]["seq"])
            if message["type"] == "end":
                ended.append(message)
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    wait_until(lambda: len(seen) >= 2, timeout=60, message="the run never streamed")

    deployment.redis.stop()
    deployment.redis.start()

    run = deployment.final(submission_id)
    assert run["status"] == "succeeded", run
    assert run["event_count"] == 12  # ten ticks, the result, the exit
    watcher.join(timeout=20)
    assert ended and ended[0]["final"], ended
    assert seen == list(range(1, 13))
    # Nothing was restarted: the next run goes through the broker as the first did.
    again = deployment.submit(ticking(0))
    assert again.status_code == 201, again.text
    assert deployment.final(again.json()["id"], timeout=30)["status"] == "succeeded"


def test_a_script_submitted_while_redis_is_down_is_accepted_and_runs_once_it_is_back(deployment):
    deployment.redis.stop()
    try:
        submitted = deployment.submit(ticking(0))
    finally:
        deployment.redis.start()
    # The submission is stored: the agent must be told so, not 500 (it would submit again).
    assert submitted.status_code == 201, submitted.text[:300]
    # Its task was lost with the broker; the reaper queues it again.
    run = deployment.final(submitted.json()["id"], timeout=40)
    assert run["status"] == "succeeded", run


def test_a_cancel_asked_while_redis_is_down_is_answered_and_stops_the_run(deployment):
    submitted = deployment.submit(ticking(20))
    assert submitted.status_code == 201, submitted.text
    submission_id = submitted.json()["id"]
    wait_until(
        lambda: (deployment.state(submission_id)["run"] or {}).get("status") == "running",
        timeout=60,
        message="the run never started",
    )
    deployment.redis.stop()
    try:
        with deployment.api() as api:
            answer = api.post(f"/api/v1/submissions/{submission_id}/cancel/")
    finally:
        deployment.redis.start()
    # The cancel is stored on the run's row before the workers are told: it is answered, and
    # the worker reads it with its next heartbeat though the broadcast never left.
    assert answer.status_code == 202, answer.text[:300]
    run = deployment.final(submission_id, timeout=30)
    assert (run["status"], run["outcome"]) == ("failed", "cancelled"), run


def test_a_build_asked_while_redis_is_down_is_answered_and_never_blocks_the_next(deployment):
    with deployment.session() as page:
        sandbox = deployment.sandbox_id("ecommerce")
        deployment.redis.stop()
        try:
            asked = page.post(f"/catalog/sandboxes/{sandbox}/build/")
        finally:
            deployment.redis.start()
        assert asked.status_code == 302, asked.text[:300]
        # Nobody took it (its task never left): it ends saying so, and Build works again.
        wait_until(
            lambda: 'id="build-status">Failed<' in page.get(f"/catalog/sandboxes/{sandbox}/").text,
            timeout=30,
            message="the unsent build never ended",
        )
        again = page.post(f"/catalog/sandboxes/{sandbox}/build/")
        assert again.status_code == 302, again.text[:300]
