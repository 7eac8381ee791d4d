"""PostgreSQL restarted under a running deployment: nothing needs restarting after it.

Every process keeps connections in psycopg's pool, and a restart leaves each of them dead.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from .outages import Deployment, deployment_of_its_own, ticking

pytestmark = [pytest.mark.docker, pytest.mark.topology]


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    with deployment_of_its_own(tmp_path_factory.mktemp("database-restart")) as deployment:
        yield deployment


def test_after_a_database_restart_every_request_and_run_succeeds(deployment):
    first = deployment.submit(ticking(0))
    assert first.status_code == 201, first.text
    assert deployment.final(first.json()["id"])["status"] == "succeeded"
    # Fill the web process's pool with several connections, as a team's traffic does.
    for _ in range(5):
        deployment.state(first.json()["id"])

    deployment.postgres.stop()
    deployment.postgres.start()

    with deployment.api() as api:
        answers = [api.get(f"/api/v1/submissions/{first.json()['id']}/") for _ in range(12)]
    assert [answer.status_code for answer in answers] == [200] * 12
    # The worker's connections were as dead as the web's: its next run must not pay for them.
    again = deployment.submit(ticking(1))
    assert again.status_code == 201, again.text
    run = deployment.final(again.json()["id"])
    assert run["status"] == "succeeded", run
    assert run["event_count"] == 4  # two ticks, the result, the exit


def test_an_event_stream_open_while_the_database_is_down_ends_saying_where_to_resume(deployment):
    # The stream's headers are sent: a database error can only be its last line. Without one
    # the agent waited on a stream that would never say anything again.
    submitted = deployment.submit(ticking(30))
    assert submitted.status_code == 201, submitted.text
    submission_id = submitted.json()["id"]
    lines: list[dict] = []
    seen = threading.Event()

    def watch() -> None:
        for line in deployment.stream(submission_id):
            lines.append(line)
            if line["type"] == "event":
                seen.set()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    assert seen.wait(60), lines
    deployment.postgres.stop()
    try:
        # The stream reads the database at least every 5 s; a connection is waited for up to
        # the pool's timeout (20 s) before the database counts as gone.
        watcher.join(timeout=40)
        ended = not watcher.is_alive()
    finally:
        deployment.postgres.start()
    assert ended, lines[-3:]
    last = lines[-1]
    assert (last["type"], last["final"], last["reason"]) == ("end", False, "unavailable"), last
    sent = max(line["event"]["seq"] for line in lines if line["type"] == "event")
    assert last["after"] == sent and f"after={sent}" in last["message"], last
