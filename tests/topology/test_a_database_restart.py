"""PostgreSQL restarted under a running deployment: nothing needs restarting after it.

Every process keeps connections in psycopg's pool, and a restart leaves each of them dead.
"""

from __future__ import annotations

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
