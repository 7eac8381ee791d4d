"""Through the web app and a real container: a tool's own secret reaches that tool's calls only.

The demo's `send_receipt` declares MAIL_API_TOKEN and the `ecommerce` sandbox declares none, so
the token is that tool's alone (tests/sandbox/test_a_tools_own_secret_is_set_for_its_calls_alone.py
has the harness's side, with spawned processes and threads).
"""

from __future__ import annotations

import pytest

from jazzmine_web.catalog.services import sandbox_builder, secret_value_set, tool_update
from jazzmine_web.runs.models import RunEvent, RunStatus
from jazzmine_web.runs.preparation import run_claim_prepare
from jazzmine_web.runs.services import run_create
from tests.web.helpers import accept_code

SCRIPT = (
    "receipt = send_receipt('o-1', 'ada@example.com')\n"
    "emit_result([receipt.success, receipt.message, get_user('u1').data])\n"
)


def _peeking(sandbox) -> None:
    """Make `get_user` return what it sees of the mail token (it declares no secret)."""
    tool = sandbox.tools.get(name="get_user")
    body = "def get_user(user_id: str) -> ToolResponse:\n"
    assert body in tool.source
    peek = (
        body
        + "    import os\n    return ToolResponse(success=True, data=os.environ.get('MAIL_API_TOKEN'))\n"
    )
    tool_update(tool=tool, source=tool.source[: tool.source.index(body)] + peek)
    # Accepted by an admin: this is about scoping between accepted tools (unaccepted code
    # gets no secret at all: test_secrets_reach_only_code_an_admin_accepted.py).
    accept_code(sandbox, "get_user")


@pytest.mark.django_db
def test_the_request_says_which_secret_is_which_tools(ecommerce, member):
    secret_value_set(sandbox=ecommerce, name="MAIL_API_TOKEN", value="mail-s3cret", user=None)
    run = run_create(sandbox=ecommerce, user=member, body=SCRIPT, start=False)
    tag = sandbox_builder(ecommerce).image_tag(ecommerce.name)
    prepared = run_claim_prepare(run_id=run.pk, worker="w1@host", known_images=frozenset({tag}))
    assert prepared.request.secrets == {"MAIL_API_TOKEN": "mail-s3cret"}
    assert prepared.request.tool_secrets == {"send_receipt": frozenset({"MAIL_API_TOKEN"})}
    assert b'"tool_secrets": {"send_receipt": ["MAIL_API_TOKEN"]}' in prepared.request.to_line(5)


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_a_run_gives_the_mail_token_to_send_receipt_and_not_to_get_user(ecommerce, member, worker):
    secret_value_set(sandbox=ecommerce, name="MAIL_API_TOKEN", value="mail-s3cret", user=None)
    _peeking(ecommerce)
    for _ in range(2):  # twice: the second in a warm sandbox of the same image
        run = run_create(sandbox=ecommerce, user=member, body=SCRIPT)
        assert worker.future(run.pk).result(timeout=180) == RunStatus.SUCCEEDED
        result = RunEvent.objects.get(run_id=run.pk, type="result").data
        assert result == [True, None, None]  # sent; and get_user saw no token


@pytest.mark.django_db
def test_tools_own_secrets_past_what_the_harness_hands_over_are_said_on_the_run(ecommerce, member):
    # Stored before values were bounded: more than the 1 MiB pipe the harness hands the
    # tools' own secrets through. It handed none, and said so only in the run's log.
    from jazzmine_web.catalog.crypto import encrypt
    from jazzmine_web.catalog.models import SecretValue

    SecretValue.objects.create(
        sandbox=ecommerce, name="MAIL_API_TOKEN", ciphertext=encrypt("m" * (1 << 20))
    )
    run = run_create(sandbox=ecommerce, user=member, body=SCRIPT, start=False)
    tag = sandbox_builder(ecommerce).image_tag(ecommerce.name)
    prepared = run_claim_prepare(run_id=run.pk, worker="w1@host", known_images=frozenset({tag}))
    assert prepared.request.tool_secrets == {}
    assert "MAIL_API_TOKEN" not in prepared.request.secrets  # never the script's either
    run.refresh_from_db()
    assert any("no tool got its own secrets" in note for note in run.notes), run.notes
