"""The only worker of a deployment killed outright: its runs still end, told by beat.

The reapers ran as tasks on the workers, so with the only worker dead nothing judged it dead:
its run stayed `running` (its page promising an end at the heartbeat timeout) and a Cancel
pressed meanwhile did nothing, until a worker started again. Beat runs the reapers itself.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.waiting import wait_until
from tests.workers import worker_start

from .outages import HEARTBEAT_TIMEOUT, Deployment, deployment_of_its_own, ticking

pytestmark = [pytest.mark.docker, pytest.mark.topology]


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    with deployment_of_its_own(tmp_path_factory.mktemp("lone-worker")) as deployment:
        yield deployment


def running(deployment: Deployment) -> str:
    """Submit a minute of ticks and return its submission's id once its run is running."""
    submitted = deployment.submit(ticking(60))
    assert submitted.status_code == 201, submitted.text
    submission_id = submitted.json()["id"]
    wait_until(
        lambda: (deployment.state(submission_id)["run"] or {}).get("status") == "running",
        timeout=60,
        message="the run never started",
    )
    return submission_id


def restart(deployment: Deployment) -> None:
    """Start the worker again: it removes what its killed life left on the engine."""
    worker = deployment.worker
    deployment.worker = worker_start(
        env=deployment.env, name=worker.name, log_path=worker.log_path, concurrency=2
    )


def test_a_run_of_the_killed_only_worker_ends_within_the_heartbeat_timeout(deployment):
    submission_id = running(deployment)
    deployment.worker.kill()
    killed = time.monotonic()
    try:
        run = deployment.final(submission_id, timeout=HEARTBEAT_TIMEOUT + 30)
        assert time.monotonic() - killed < HEARTBEAT_TIMEOUT + 15
        assert (run["status"], run["outcome"]) == ("failed", "worker_lost"), run
        assert "one@outage" in run["message"] and "stopped answering" in run["message"]
    finally:
        restart(deployment)


def test_a_cancel_pressed_while_the_only_worker_is_dead_ends_the_run_cancelled(deployment):
    submission_id = running(deployment)
    deployment.worker.kill()
    try:
        with deployment.api() as api:
            answer = api.post(f"/api/v1/submissions/{submission_id}/cancel/")
        assert answer.status_code == 202, answer.text[:300]
        run = deployment.final(submission_id, timeout=HEARTBEAT_TIMEOUT + 30)
        assert (run["status"], run["outcome"]) == ("failed", "cancelled"), run
        assert run["message"].startswith("cancelled by agent"), run["message"]
        assert "stopped answering" in run["message"]
    finally:
        restart(deployment)
    # The worker that came back runs the next one as ever.
    again = deployment.submit(ticking(0))
    assert deployment.final(again.json()["id"], timeout=60)["status"] == "succeeded"
