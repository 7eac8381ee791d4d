"""`/v1/key` answers a live run's token, for the secrets its tools declare, and nothing else."""

from __future__ import annotations

import datetime

import pytest
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from jazzmine_web.catalog.services import script_tool_save, secret_value_set
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.scripttools.models import KeychainToken
from jazzmine_web.scripttools.services import keychain_environment, keychain_token_issue

from .conftest import rsi_tool

URL = "/v1/key"


@pytest.fixture
def run(sandbox, member):
    script_tool_save(sandbox=sandbox, tool=rsi_tool(secrets=["POLYGON_API_KEY"]), author=member)
    secret_value_set(sandbox=sandbox, name="POLYGON_API_KEY", value="pk-123", user=member)
    secret_value_set(sandbox=sandbox, name="OTHER_KEY", value="nope", user=member)
    return Run.objects.create(sandbox=sandbox, body="x", script="x", status=RunStatus.RUNNING)


@pytest.fixture
def token(run, sandbox):
    return keychain_token_issue(sandbox=sandbox, allowed=["POLYGON_API_KEY"], lifetime=30, run=run)


def _get(client, key: str, token: str | None):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token is not None else {}
    return client.get(URL, {"key": key}, **headers)


def test_the_endpoint_is_where_the_spec_puts_it() -> None:
    assert reverse("scripttools:keychain") == URL


def test_a_live_run_reads_a_declared_secret(client, token) -> None:
    response = _get(client, "POLYGON_API_KEY", token)
    assert response.status_code == 200
    assert response.json() == {"value": "pk-123"}
    assert response["Cache-Control"] == "no-store"


def test_it_refuses_a_request_without_a_token(client, token) -> None:
    assert _get(client, "POLYGON_API_KEY", None).status_code == 403


def test_it_refuses_a_wrong_token(client, token) -> None:
    response = _get(client, "POLYGON_API_KEY", token[:-2] + "xx")
    assert response.status_code == 403
    assert "value" not in response.json()


def test_it_answers_404_for_a_key_the_tools_do_not_declare(client, token) -> None:
    response = _get(client, "OTHER_KEY", token)
    assert response.status_code == 404
    assert "value" not in response.json()


def test_it_answers_404_for_a_declared_key_without_a_value(client, run, sandbox) -> None:
    token = keychain_token_issue(sandbox=sandbox, allowed=["UNSET_KEY"], lifetime=30, run=run)
    assert _get(client, "UNSET_KEY", token).status_code == 404


def test_the_token_dies_with_its_run(client, run, token) -> None:
    Run.objects.filter(pk=run.pk).update(status=RunStatus.SUCCEEDED)
    assert _get(client, "POLYGON_API_KEY", token).status_code == 403


def test_the_token_dies_when_it_expires(client, run, token) -> None:
    KeychainToken.objects.update(expires_at=timezone.now() - datetime.timedelta(seconds=1))
    assert _get(client, "POLYGON_API_KEY", token).status_code == 403


def test_only_a_hash_of_the_token_is_stored(token) -> None:
    row = KeychainToken.objects.get()
    assert token not in row.token_sha256 and len(row.token_sha256) == 64


@override_settings(JAZZMINE_KEYCHAIN_URL="http://172.17.0.1:8000")
def test_only_network_enabled_sandboxes_get_the_endpoint(run, sandbox) -> None:
    assert keychain_environment(sandbox=sandbox, allowed=["A"], lifetime=5, run=run) == {}
    sandbox.network = True
    env = keychain_environment(sandbox=sandbox, allowed=["A"], lifetime=5, run=run)
    assert env["JAZZMINE_KEYCHAIN_URL"] == "http://172.17.0.1:8000/v1/key"
    assert len(env["JAZZMINE_KEYCHAIN_TOKEN"]) > 30


@pytest.mark.parametrize("extra", ["\xa0", "\u3000", "\x1c", "\t", "\n"], ids=repr)
def test_a_token_beside_a_character_no_one_typed_is_refused(client, token, extra) -> None:
    # `str.strip()` once trimmed these before the token was looked up.
    assert _get(client, "POLYGON_API_KEY", token + extra).status_code == 403
    assert _get(client, "POLYGON_API_KEY", extra + token).status_code == 403
