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
from jazzmine_web.catalog.services import sandbox_builder, script_tool_save
from jazzmine_web.runs.credentials import run_credentials_issue
from jazzmine_web.runs.lifecycle import run_cancel
from jazzmine_web.runs.models import Run, RunEvent, RunStatus
from jazzmine_web.runs.preparation import run_claim_prepare
from jazzmine_web.runs.services import run_create
from jazzmine_web.scripttools.models import KeychainToken
from jazzmine_web.scripttools.services import script_tool_publish
from tests.waiting import wait_until
from tests.web.helpers import accept_code

from .conftest import make_tool, trial_recorded

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
    accept_code(sandbox, row.name)  # set up by an admin: its secrets reach it
    trial_recorded(row)
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
    env = run_credentials_issue(run=run, lifetime=30, tool_allowed=lambda name: True)
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
    client, shared, member, celery_workers
) -> None:
    # The worker hands out keychain tokens, so it is the one that must know the URL.
    celery_workers.running({"JAZZMINE_KEYCHAIN_URL": URL})
    # The run shows what the tool saw, then waits: its tokens live until it ends.
    body = (
        "r = snoop()\nemit_intermediate('seen', r.data)\ntime.sleep(30)\n"
        "emit_result({'ok': r.success})\n"
    )
    run = run_create(sandbox=shared, user=member, body=body)
    seen_event = wait_for_event(run, "intermediate")
    seen = seen_event.data["data"]
    assert seen["own"] == "snoop-secret"
    assert seen["other"] is None
    assert not [n for n in seen["names"] if n.startswith("JAZZMINE_KEYCHAIN_TOKEN_")]
    assert "VAULT_KEY" not in seen["names"]
    assert "vault-secret" not in json.dumps(seen)
    # The token the tool was handed is its own: while the run is live it reads only SNOOP_KEY.
    assert _key(client, seen["token"], "SNOOP_KEY").json() == {"value": "snoop-secret"}
    refused = _key(client, seen["token"], "VAULT_KEY")
    assert refused.status_code in (403, 404) and "value" not in refused.json()
    # And once the run ends (cancelled here), its tokens answer nothing.
    assert run_cancel(run=run, user=member)
    wait_until(
        lambda: Run.objects.get(pk=run.pk).is_finished, timeout=30, message="the run never ended"
    )
    wait_until(
        lambda: not KeychainToken.objects.filter(run=run).exists(),
        timeout=30,
        message="the run's tokens outlived it",
    )
    assert "value" not in _key(client, seen["token"], "SNOOP_KEY").json()


def wait_for_event(run, kind: str, timeout: float = 300):
    def arrived() -> RunEvent | None:
        event = RunEvent.objects.filter(run=run, type=kind).first()
        if event is None:
            status = Run.objects.get(pk=run.pk)
            assert not status.is_finished, f"the run ended first: {status.message}"
        return event

    return wait_until(arrived, timeout=timeout, message=f"no {kind} event")


@pytest.mark.django_db
@override_settings(JAZZMINE_KEYCHAIN_URL=URL)
def test_a_runs_request_gives_each_keychain_token_to_its_tool_alone(shared, member) -> None:
    # In the harness a Python tool shares a process with the script tools' wrappers: a token
    # set for the whole run was readable by every tool, though issued for one.
    run = run_create(sandbox=shared, user=member, body="emit_result(1)\n", start=False)
    tag = sandbox_builder(shared).image_tag(shared.name)
    request = run_claim_prepare(
        run_id=run.pk, worker="w1@host", known_images=frozenset({tag})
    ).request
    assert request.tool_secrets == {
        "snoop": frozenset({"SNOOP_KEY", "JAZZMINE_KEYCHAIN_TOKEN_snoop"}),
        "vault": frozenset({"VAULT_KEY", "JAZZMINE_KEYCHAIN_TOKEN_vault"}),
    }
    # Every declared and issued value travels; which tool may see which is the mapping's.
    assert set(request.secrets) == {
        "SNOOP_KEY", "VAULT_KEY", "JAZZMINE_KEYCHAIN_URL",
        "JAZZMINE_KEYCHAIN_TOKEN_snoop", "JAZZMINE_KEYCHAIN_TOKEN_vault",
    }  # fmt: skip


@pytest.mark.django_db
@override_settings(JAZZMINE_KEYCHAIN_URL=URL)
def test_a_run_that_may_call_one_script_tool_gets_no_token_for_another(shared, member) -> None:
    # A reviewer approved a script calling vault alone: snoop's calls are refused where the
    # code runs, and no token that reads snoop's secrets from the server is issued at all.
    run = run_create(
        sandbox=shared, user=member, body="emit_result(1)\n", start=False,
        allowed_tools=["vault"], allowed_by_reviewer=True,
    )  # fmt: skip
    tag = sandbox_builder(shared).image_tag(shared.name)
    request = run_claim_prepare(
        run_id=run.pk, worker="w1@host", known_images=frozenset({tag})
    ).request
    assert request.tool_secrets == {
        "vault": frozenset({"VAULT_KEY", "JAZZMINE_KEYCHAIN_TOKEN_vault"})
    }
    assert set(request.secrets) == {
        "VAULT_KEY", "JAZZMINE_KEYCHAIN_URL", "JAZZMINE_KEYCHAIN_TOKEN_vault",
    }  # fmt: skip
    assert KeychainToken.objects.filter(run=run).count() == 1


@pytest.mark.django_db
@override_settings(JAZZMINE_KEYCHAIN_URL=URL)
def test_tokens_withheld_by_the_wheel_check_stop_answering_at_once(shared, member, admin) -> None:
    # The worker reads the wheels of the image it runs after the run's tokens are issued; when
    # they are not the files an admin accepted, every secret stays out of the sandbox. The
    # tokens made for it stayed valid until the run ended: taken back now, before it starts.
    from django.test import Client

    from jazzmine_web.catalog.services import sandbox_update
    from jazzmine_web.runs.preparation import run_wheels_gate

    sandbox_update(sandbox=shared, actor=admin, dependencies=["jzlock==1.0"])
    shared.refresh_from_db()
    shared.accepted_wheels = ["jzlock-1.0-py3-none-any.whl " + "a" * 64]
    shared.save(update_fields=["accepted_wheels"])
    run = run_create(sandbox=shared, user=member, body="emit_result(1)\n", start=False)
    tag = sandbox_builder(shared).image_tag(shared.name)
    prepared = run_claim_prepare(run_id=run.pk, worker="w1@host", known_images=frozenset({tag}))
    assert prepared.wheels_check
    token = prepared.request.secrets["JAZZMINE_KEYCHAIN_TOKEN_snoop"]
    keychain = Client()
    assert _key(keychain, token, "SNOOP_KEY").status_code == 200  # valid once issued

    # The image holds another file of the same pinned version.
    refused = run_wheels_gate(
        prepared=prepared, image_wheels=["jzlock-1.0-py3-none-any.whl " + "b" * 64]
    )
    assert refused.request.secrets == {} and refused.request.tool_secrets == {}
    assert not KeychainToken.objects.filter(run=run).exists()
    for _ in range(2):
        answer = _key(keychain, token, "SNOOP_KEY")
        assert answer.status_code in (401, 403) and "snoop-secret" not in answer.content.decode()

    # The accepted files: nothing withheld, the tokens stay until the run ends.
    again = run_create(sandbox=shared, user=member, body="emit_result(1)\n", start=False)
    prepared = run_claim_prepare(run_id=again.pk, worker="w1@host", known_images=frozenset({tag}))
    kept = run_wheels_gate(prepared=prepared, image_wheels=list(shared.accepted_wheels))
    assert kept is prepared
    assert KeychainToken.objects.filter(run=again).count() == 2
