"""Settings that would break the workers (a heartbeat of 0, a timeout too short) are refused."""

from __future__ import annotations

import pytest

from tests.web.helpers import manage_check as check


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"JAZZMINE_HEARTBEAT_SECONDS": "0"}, "must be more than 0"),
        ({"JAZZMINE_HEARTBEAT_SECONDS": "-1"}, "must be more than 0"),
        ({"JAZZMINE_HEARTBEAT_SECONDS": "nan"}, "finite"),
        ({"JAZZMINE_HEARTBEAT_SECONDS": "inf"}, "finite"),
        ({"JAZZMINE_HEARTBEAT_SECONDS": "1e400"}, "finite"),
        ({"JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS": "9"}, "must be more than 10"),
        ({"JAZZMINE_REDIS_SOCKET_TIMEOUT": "5"}, "must be more than 5"),
        ({"JAZZMINE_REQUEUE_AFTER_SECONDS": "0"}, "must be more than 0"),
        # Review settings are read at start like the rest, not first when a webhook retries.
        ({"JAZZMINE_WEBHOOK_MAX_ATTEMPTS": "many"}, "must be an integer"),
        ({"JAZZMINE_REVIEW_MAX_WAIT_SECONDS": "nan"}, "finite"),
        ({"JAZZMINE_DATABASE_URL": "mysql://u:p@db/x"}, "must name SQLite or PostgreSQL"),
        ({"JAZZMINE_DATABASE_URL": "postgres://u@db/x"}, "JAZZMINE_SECRET_KEY must be set"),
    ],
)
def test_a_setting_that_would_break_the_workers_stops_the_start(env, said):
    result = check(**env)
    assert result.returncode != 0
    assert said in result.stderr


def test_sensible_worker_settings_start():
    assert (
        check(JAZZMINE_HEARTBEAT_SECONDS="1", JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS="6").returncode
        == 0
    )
