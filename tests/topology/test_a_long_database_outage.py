"""A run goes on through a database outage longer than the pool waits for a connection, and
longer than the heartbeat timeout.

Its events wait in the worker and are stored, in order and each once, when the database answers
again. The worker gave up at the pool's first timeout (20 s by default): the store failed, and
the run, which had done nothing wrong, ended failed. Once the database answers, the run's
heartbeat is older than the timeout: the reaper must wait for its worker to reconnect (which
`tests/web/runs/test_the_reaper_waits_out_a_database_outage.py` holds it to; here, the worker
reconnects first and the race rarely shows).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from .outages import HEARTBEAT_TIMEOUT, Deployment, deployment_of_its_own, ticking

pytestmark = [pytest.mark.docker, pytest.mark.topology]

POOL_TIMEOUT = 3
OUTAGE = 3 * POOL_TIMEOUT  # and longer than the heartbeat timeout (outages.HEARTBEAT_TIMEOUT)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    # The heartbeat timeout stays this module's 6 s, shorter than the outage: when the
    # database answers again, the run's heartbeat is that old, and the reaper must not take
    # it for a dead worker's before the worker has had a timeout to reconnect.
    settings = {"JAZZMINE_DATABASE_POOL_TIMEOUT": str(POOL_TIMEOUT)}
    with deployment_of_its_own(tmp_path_factory.mktemp("long-outage"), settings) as deployment:
        yield deployment


def through_an_outage(deployment: Deployment, submission_id: str) -> None:
    """Stop the database once the run has said something, for longer than every timeout."""
    seen = threading.Event()

    def watch() -> None:
        for line in deployment.stream(submission_id):
            if line["type"] == "event":
                seen.set()
                return

    threading.Thread(target=watch, daemon=True).start()
    assert seen.wait(120), deployment.state(submission_id)
    deployment.postgres.stop()
    stopped = time.monotonic()
    try:
        time.sleep(OUTAGE)
    finally:
        deployment.postgres.start()
    # The worker's tries timed out, and the run's heartbeat is older than the timeout.
    assert time.monotonic() - stopped > max(2 * POOL_TIMEOUT, HEARTBEAT_TIMEOUT)


def events_of(deployment: Deployment, submission_id: str) -> list[dict]:
    """Return a submission's events, as its NDJSON stream gives them to an agent."""
    events = []
    for line in deployment.stream(submission_id):
        if line["type"] == "event":
            events.append(line["event"])
        if line["type"] == "end":
            return events
    raise AssertionError("the stream ended without its end line")


def test_a_run_goes_on_through_the_outage_and_keeps_every_event(deployment):
    submitted = deployment.submit(ticking(15))
    assert submitted.status_code == 201, submitted.text
    submission_id = submitted.json()["id"]
    through_an_outage(deployment, submission_id)

    run = deployment.final(submission_id, timeout=90)
    assert (run["status"], run["outcome"]) == ("succeeded", "result"), run
    assert run["event_count"] == 32  # 30 ticks, the result, the exit
    events = events_of(deployment, submission_id)
    assert [event["seq"] for event in events] == list(range(1, 33))
    ticks = [event["data"]["message"] for event in events if event["type"] == "log"]
    assert ticks == [f"tick {i}" for i in range(30)]
    log = (deployment.log_dir / "worker.log").read_text()
    assert "the database does not answer, its events wait" in log


# bashkit has no `sleep`: the run lasts by its builtin calls (each an event of its timeline),
# some seconds of them, so that the database stops while it goes on.
CALLS = 2000
BASH_CALLING = f"""\
for i in $(seq 1 {CALLS}); do
  get_user --user_id U-1 > /dev/null
done
echo "{CALLS} calls"
"""
WAITED = "the database does not answer, its events wait"


def test_a_bash_run_goes_on_through_the_outage_and_keeps_every_event(deployment):
    log = deployment.log_dir / "worker.log"
    waits_before = log.read_text().count(WAITED)
    submitted = deployment.submit(BASH_CALLING, language="bash")
    assert submitted.status_code == 201, submitted.text
    submission_id = submitted.json()["id"]
    through_an_outage(deployment, submission_id)

    run = deployment.final(submission_id, timeout=180)
    assert (run["status"], run["outcome"]) == ("succeeded", "result"), run.get("message")
    assert run["event_count"] == CALLS + 2  # the calls, the result, the exit
    events = events_of(deployment, submission_id)
    assert [event["seq"] for event in events] == list(range(1, CALLS + 3))
    calls = [event["data"]["bash_call"] for event in events if event["type"] == "intermediate"]
    assert calls == list(range(1, CALLS + 1))
    (result,) = [event["data"] for event in events if event["type"] == "result"]
    assert result["stdout"] == f"{CALLS} calls\n"
    # The run was still calling when the database stopped: its events waited for it.
    assert log.read_text().count(WAITED) > waits_before
