"""A run someone asked to stop reads no more secrets from `/v1/key`.

Cancelling a running run records why and tells its worker to kill the sandbox; the run stays
`running` until the worker has done so (within a second, or only at the run's timeout when
the worker never heard). Meanwhile the sandbox is still whatever the person wanted stopped:
its keychain tokens must stop answering from the moment the stop is asked, not when the
worker gets round to it.
"""

from __future__ import annotations

import pytest

from jazzmine_web.catalog.services import script_tool_save, secret_value_set
from jazzmine_web.runs.lifecycle import run_cancel_request
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.scripttools.services import keychain_token_issue

from .conftest import rsi_tool


@pytest.fixture
def run(sandbox, member):
    script_tool_save(sandbox=sandbox, tool=rsi_tool(secrets=["POLYGON_API_KEY"]), author=member)
    secret_value_set(sandbox=sandbox, name="POLYGON_API_KEY", value="pk-123", user=member)
    return Run.objects.create(sandbox=sandbox, body="x", script="x", status=RunStatus.RUNNING)


@pytest.fixture
def token(run, sandbox):
    return keychain_token_issue(sandbox=sandbox, allowed=["POLYGON_API_KEY"], lifetime=60, run=run)


def _key(client, token: str):
    return client.get("/v1/key", {"key": "POLYGON_API_KEY"}, HTTP_AUTHORIZATION=f"Bearer {token}")


def test_a_running_runs_token_reads_its_secret(client, token) -> None:
    assert _key(client, token).json() == {"value": "pk-123"}


def test_the_token_reads_nothing_once_a_stop_is_asked_though_the_run_still_runs(
    client, run, token
) -> None:
    assert run_cancel_request(run_id=run.pk, reason="cancelled by ada") == "running"
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING  # the worker has not killed the sandbox yet
    response = _key(client, token)
    assert response.status_code == 403
    assert "value" not in response.json()
