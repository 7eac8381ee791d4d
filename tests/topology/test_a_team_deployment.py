"""Runs across processes: submitted on one web process, watched on another, executed by
whichever worker claims them, surviving what happens to the processes around them."""

from __future__ import annotations

import json
import os
import subprocess
import time
from typing import Any

import pytest

from tests.waiting import wait_until
from tests.web.reviews.receiver import Receiver

from .conftest import HEARTBEAT_TIMEOUT, Deployment

pytestmark = [pytest.mark.docker, pytest.mark.topology]

BURST = "for i in range(1000):\n    emit_log(f'line {i}')\nemit_result({'lines': 1000})\n"
SLOW = "for i in range(60):\n    emit_log(f'tick {i}')\n    time.sleep(0.5)\nemit_result(1)\n"


def submit(deployment: Deployment, web, body: str) -> dict[str, Any]:
    with deployment.api(web) as api:
        response = api.post(
            "/api/v1/submissions/",
            json={"sandbox": "demo/ecommerce", "task": "topology", "body": body},
        )
    assert response.status_code in (200, 201), response.text
    return response.json()


def state_of(deployment: Deployment, web, submission_id: str) -> dict[str, Any]:
    with deployment.api(web) as api:
        return api.get(f"/api/v1/submissions/{submission_id}/").json()


def wait_for(deployment: Deployment, web, submission_id: str, test, timeout: float = 240):
    deadline = time.monotonic() + timeout
    while True:
        state = state_of(deployment, web, submission_id)
        if test(state):
            return state
        assert time.monotonic() < deadline, f"gave up waiting: {json.dumps(state)[:2000]}"
        time.sleep(0.2)


def running(state: dict[str, Any]) -> bool:
    return state["run"] is not None and state["run"]["status"] == "running"


def test_a_watcher_on_web_b_gets_every_event_of_a_run_submitted_on_web_a(deployment):
    state = submit(deployment, deployment.web_a, BURST)
    events: list[int] = []
    with (
        deployment.api(deployment.web_b) as api,
        api.stream("GET", f"/api/v1/submissions/{state['id']}/events/") as stream,
    ):
        for line in stream.iter_lines():
            message = json.loads(line)
            if message["type"] == "event":
                events.append(message["event"]["seq"])
            if message["type"] == "end":
                assert message["final"], message
                break
    # 1000 logs, the result and the exit: none lost, none twice, in order.
    assert events == list(range(1, 1003))
    final = state_of(deployment, deployment.web_b, state["id"])
    assert final["run"]["status"] == "succeeded"
    assert final["run"]["worker"] in deployment.workers


def test_a_killed_worker_fails_its_run_in_time_and_leaves_no_container(deployment):
    state = submit(deployment, deployment.web_a, SLOW)
    state = wait_for(deployment, deployment.web_a, state["id"], running)
    name = state["run"]["worker"]
    deployment.workers[name].kill()
    killed = time.monotonic()
    final = wait_for(
        deployment,
        deployment.web_b,
        state["id"],
        lambda s: s["run"]["status"] == "failed",
        timeout=HEARTBEAT_TIMEOUT + 30,
    )
    assert time.monotonic() - killed < HEARTBEAT_TIMEOUT + 15
    assert final["run"]["outcome"] == "worker_lost"
    assert name in final["run"]["message"] and "stopped answering" in final["run"]["message"]
    assert final["infrastructure_error"] and final["previous_error"] is None
    # Its containers carry its name; started again, it removes what its last life left.
    deployment.restart_worker(name)
    docker_host = deployment.engines[name]
    deadline = time.monotonic() + 30
    while leftovers(docker_host, name, deployment):
        assert time.monotonic() < deadline, "the killed worker's containers are still there"
        time.sleep(0.5)


def leftovers(docker_host: str, name: str, deployment: Deployment) -> list[str]:
    env = {**os.environ, **({"DOCKER_HOST": docker_host} if docker_host else {})}
    boot = deployment.sql("SELECT boot FROM runs_worker WHERE name = %s", name)[0][0]
    listed = subprocess.run(
        ["docker", "ps", "-a", "--filter", f"label=jazzmine.owner={name}",
         "--format", "{{.ID}} {{.Label \"jazzmine.boot\"}}"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout.split("\n")  # fmt: skip
    return [line for line in listed if line.strip() and not line.endswith(boot)]


def test_restarting_a_web_process_mid_run_leaves_the_run_alone(deployment):
    state = submit(deployment, deployment.web_a, SLOW.replace("range(60)", "range(8)"))
    wait_for(deployment, deployment.web_b, state["id"], running)
    deployment.web_a.stop()
    deployment.web_a.start()
    final = wait_for(deployment, deployment.web_a, state["id"], lambda s: s["final"], timeout=120)
    assert final["run"]["status"] == "succeeded", final["run"]
    assert final["run"]["event_count"] == 10  # eight ticks, the result, the exit


def test_webhooks_go_out_once_per_attempt_with_two_workers(deployment):
    receiver = Receiver(statuses=[500, 500])
    try:
        with deployment.api(deployment.web_a) as api:
            assert api.put("/api/v1/webhook/", json={"url": receiver.url}).status_code == 200
        state = submit(deployment, deployment.web_b, "emit_result(1)\n")
        wait_for(deployment, deployment.web_a, state["id"], lambda s: s["final"])
        deadline = time.monotonic() + 60
        while True:
            rows = deployment.sql(
                "SELECT id, status, attempt_count FROM reviews_webhookdelivery ORDER BY id"
            )
            if len(rows) >= 2 and all(status != "pending" for _id, status, _n in rows):
                break
            assert time.monotonic() < deadline, rows
            time.sleep(0.2)
        time.sleep(2)  # a duplicate attempt would have arrived by now
        requests = receiver.requests
    finally:
        receiver.close()
        with deployment.api(deployment.web_a) as api:
            api.delete("/api/v1/webhook/")
    by_delivery: dict[str, list[str]] = {}
    for headers, _body in requests:
        by_delivery.setdefault(headers["X-Jazzmine-Delivery"], []).append(
            headers["X-Jazzmine-Attempt"]
        )
    # Every attempt the database counts reached the receiver exactly once, in order; the two
    # refusals were retried (after their backoff) by whichever worker took the retry.
    counted = {str(pk): n for pk, _status, n in rows}
    assert {pk: len(attempts) for pk, attempts in by_delivery.items()} == counted
    for attempts in by_delivery.values():
        assert attempts == [str(n) for n in range(1, len(attempts) + 1)]
    assert sum(counted.values()) == len(rows) + 2


def test_a_cancel_on_web_b_kills_the_sandbox_a_worker_runs_for_web_a(deployment):
    state = submit(deployment, deployment.web_a, SLOW)
    # Its first event, not only `running`: a worker whose pool is still cold says `running`
    # while it starts the container, which must be among those listed before the cancel.
    state = wait_for(
        deployment, deployment.web_a, state["id"], lambda s: running(s) and s["run"]["event_count"]
    )
    name = state["run"]["worker"]
    before = sandboxes(deployment.engines[name])
    asked = time.monotonic()
    with deployment.api(deployment.web_b) as api:
        answer = api.post(f"/api/v1/submissions/{state['id']}/cancel/")
    assert answer.status_code == 202, answer.text
    final = wait_for(
        deployment, deployment.web_a, state["id"], lambda s: s["run"]["status"] == "failed"
    )
    assert time.monotonic() - asked < 3  # a second to kill, plus two processes and the API
    assert final["run"]["outcome"] == "cancelled"
    assert "cancelled by agent topology (demo)" in final["run"]["message"]
    # Its sandbox is gone from the engine of the worker that ran it.
    wait_until(
        lambda: before - sandboxes(deployment.engines[name]),
        timeout=5,
        message="the cancelled run's sandbox is still there",
    )


def sandboxes(docker_host: str) -> set[str]:
    env = {**os.environ, **({"DOCKER_HOST": docker_host} if docker_host else {})}
    listed = subprocess.run(
        ["docker", "ps", "-q", "--filter", "label=jazzmine.run"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return set(listed.split())
