"""A script tool sees only the secrets it declares: in its environment and through the keychain.

Two script tools share a network-enabled sandbox; `snoop` declares SNOOP_KEY and tries to read
`vault`'s VAULT_KEY, from its environment and with its keychain token at /v1/key.
"""

from __future__ import annotations

import json

import pytest
from django.test import override_settings

from jazzmine_web.catalog.crypto import encrypt
from jazzmine_web.catalog.models import SecretValue
from jazzmine_web.catalog.services import script_tool_save
from jazzmine_web.runs import executor as run_executor
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create
from jazzmine_web.scripttools.models import KeychainToken, TrialRun
from jazzmine_web.scripttools.services import script_tool_publish

from .conftest import make_tool

URL = "http://172.17.0.1:8000"

SNOOP = """\
import json, os
print(json.dumps({
    "own": os.environ.get("SNOOP_KEY"),
    "other": os.environ.get("VAULT_KEY"),
    "token": os.environ.get("JAZZMINE_KEYCHAIN_TOKEN"),
    "names": sorted(os.environ),
}))
"""
VAULT = 'import json\nprint(json.dumps({"ok": True}))\n'


def _publish(sandbox, member, tool):
    row, _ = script_tool_save(sandbox=sandbox, tool=tool, author=member)
    TrialRun.objects.create(
        tool=row, checksum=row.checksum, state="done", status="valid_json", passed=True
    )
    return script_tool_publish(tool=row)


@pytest.fixture
def shared(sandbox, member):
    sandbox.network = True
    sandbox.save()
    _publish(sandbox, member, make_tool("snoop", SNOOP, secrets=["SNOOP_KEY"]))
    _publish(sandbox, member, make_tool("vault", VAULT, secrets=["VAULT_KEY"]))
    for name, value in (("SNOOP_KEY", "snoop-secret"), ("VAULT_KEY", "vault-secret")):
        SecretValue.objects.create(sandbox=sandbox, name=name, ciphertext=encrypt(value))
    return sandbox


def _key(client, token: str, key: str):
    return client.get("/v1/key", {"key": key}, HTTP_AUTHORIZATION=f"Bearer {token}")


@pytest.mark.django_db
@override_settings(JAZZMINE_KEYCHAIN_URL=URL)
def test_each_script_tool_gets_a_token_that_answers_only_for_its_own_secrets(
    client, shared, member
) -> None:
    run = Run.objects.create(sandbox=shared, body="x", script="x", status=RunStatus.RUNNING)
    env = run_executor._keychain_env(run, 30)
    assert "JAZZMINE_KEYCHAIN_TOKEN" not in env  # no token that answers for every tool
    snoop, vault = env["JAZZMINE_KEYCHAIN_TOKEN_snoop"], env["JAZZMINE_KEYCHAIN_TOKEN_vault"]
    assert _key(client, snoop, "SNOOP_KEY").json() == {"value": "snoop-secret"}
    assert _key(client, vault, "VAULT_KEY").json() == {"value": "vault-secret"}
    refused = _key(client, snoop, "VAULT_KEY")
    assert refused.status_code in (403, 404) and "value" not in refused.json()
    assert sorted(KeychainToken.objects.values_list("allowed", flat=True)) == [
        ["SNOOP_KEY"],
        ["VAULT_KEY"],
    ]


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
@override_settings(JAZZMINE_KEYCHAIN_URL=URL)
def test_a_script_tool_in_a_real_run_sees_neither_the_secret_nor_the_token_of_another(
    client, shared, member, worker, monkeypatch
) -> None:
    # Keep the run's tokens past its end so the test can try the one the tool saw.
    monkeypatch.setattr(run_executor, "_revoke_keychain", lambda **_kwargs: None)
    body = "r = snoop()\nemit_result({'ok': r.success, 'seen': r.data, 'message': r.message})\n"
    run = run_create(sandbox=shared, user=member, body=body)
    assert worker.future(run.pk).result(timeout=300) == RunStatus.SUCCEEDED
    run.refresh_from_db()
    seen = run.result["seen"]
    assert run.result["ok"] is True, run.result
    assert seen["own"] == "snoop-secret"
    assert seen["other"] is None
    assert not [n for n in seen["names"] if n.startswith("JAZZMINE_KEYCHAIN_TOKEN_")]
    assert "VAULT_KEY" not in seen["names"]
    assert "vault-secret" not in json.dumps(run.result)
    # The token the tool was handed is its own: with the run "live" again it reads only SNOOP_KEY.
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    assert _key(client, seen["token"], "SNOOP_KEY").json() == {"value": "snoop-secret"}
    refused = _key(client, seen["token"], "VAULT_KEY")
    assert refused.status_code in (403, 404) and "value" not in refused.json()
