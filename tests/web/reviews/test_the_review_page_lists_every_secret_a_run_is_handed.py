"""The review page lists every secret the approved run is handed: the sandbox's beside the tools'.

A secret the sandbox declares goes into the run's process environment before the script's
first line, whatever the script calls; a tool's own only into that tool's calls. The page
listed the called tools' own secrets alone, so a reviewer read "TABLE_TOKEN (set)" and
approved a run that read SHOP_API_KEY too.
"""

from __future__ import annotations

import re

import pytest

from jazzmine_web.catalog.services import sandbox_builder, sandbox_update, secret_value_set
from jazzmine_web.reviews.models import Submission
from jazzmine_web.runs.models import Run
from jazzmine_web.runs.preparation import run_claim_prepare

from .conftest import approve_form, set_policy, submit

pytestmark = pytest.mark.django_db

# send_receipt declares MAIL_API_TOKEN, its own (the demo's sandbox declares none).
RECEIPT = 'emit_result(send_receipt("O-1", "ada@example.com").data)\n'
NO_TOOL = "emit_result(1)\n"


@pytest.fixture
def shop(ecommerce, admin):
    """The demo sandbox with a secret of its own (SHOP_API_KEY), both secrets' values set."""
    sandbox_update(sandbox=ecommerce, secrets=["SHOP_API_KEY"], actor=admin)
    for name in ("SHOP_API_KEY", "MAIL_API_TOKEN"):
        secret_value_set(sandbox=ecommerce, name=name, value=f"{name}-value", user=admin)
    set_policy(ecommerce)
    return ecommerce


def pending(api, sandbox, body: str) -> Submission:
    state = submit(api, sandbox, body=body).json()
    assert state["status"] == "pending", state
    return Submission.objects.get(pk=state["id"])


def secrets_line(html: str) -> str:
    found = re.search(r"Secrets it can reach: (.*?)</p>", html)
    assert found is not None, "the page lists no secret"
    return found.group(1)


def reading(client, submission: Submission, body: str) -> str:
    """Return the edit panel's live reading of `body`, as the page asks for it while typing."""
    response = client.post(
        f"/reviews/{submission.pk}/reading/",
        {"body": body},
        headers={"HX-Request": "true", "HX-Target": "tools-panel"},
    )
    assert response.status_code == 200
    return response.content.decode()


SHOP = (
    '<span data-secret="SHOP_API_KEY" data-scope="sandbox"><code>SHOP_API_KEY</code> '
    "(set, the sandbox's: every tool's, for the whole run)</span>"
)
MAIL = (
    '<span data-secret="MAIL_API_TOKEN" data-scope="tool"><code>MAIL_API_TOKEN</code> '
    "(set, only in calls of send_receipt)</span>"
)


def test_a_script_calling_a_tool_is_shown_the_sandboxs_secret_beside_the_tools(
    api, shop, reviewer_client
) -> None:
    submission = pending(api, shop, RECEIPT)
    line = secrets_line(reviewer_client.get(f"/reviews/{submission.pk}/").content.decode())
    assert line == f"{SHOP}, {MAIL}"


def test_a_script_calling_no_tool_is_shown_the_sandboxs_secret_alone(
    api, shop, reviewer_client
) -> None:
    # Set in its process before its first line all the same; send_receipt's is never sent.
    submission = pending(api, shop, NO_TOOL)
    html = reviewer_client.get(f"/reviews/{submission.pk}/").content.decode()
    assert "It calls none of the sandbox" in html
    assert secrets_line(html) == SHOP


def test_the_edit_panels_reading_lists_the_sandboxs_secret_beside_the_tools(
    api, shop, reviewer_client
) -> None:
    submission = pending(api, shop, NO_TOOL)
    html = reading(reviewer_client, submission, RECEIPT)
    assert 'data-reading="edit"' in html and 'data-tool="send_receipt"' in html
    assert secrets_line(html) == f"{SHOP}, {MAIL}"
    # An edit that calls no tool any more is still handed the sandbox's.
    assert secrets_line(reading(reviewer_client, submission, NO_TOOL)) == SHOP


def test_a_tools_secret_the_sandbox_declares_too_is_the_sandboxs(
    api, shop, admin, reviewer_client
) -> None:
    # Declared by both, it is every tool's for the whole run, not send_receipt's alone.
    sandbox_update(sandbox=shop, secrets=["MAIL_API_TOKEN", "SHOP_API_KEY"], actor=admin)
    submission = pending(api, shop, RECEIPT)
    line = secrets_line(reviewer_client.get(f"/reviews/{submission.pk}/").content.decode())
    assert line == (
        '<span data-secret="MAIL_API_TOKEN" data-scope="sandbox"><code>MAIL_API_TOKEN</code> '
        f"(set, the sandbox's: every tool's, for the whole run)</span>, {SHOP}"
    )


def test_a_declared_secret_without_a_value_is_listed_as_not_set(
    api, ecommerce, admin, reviewer_client
) -> None:
    sandbox_update(sandbox=ecommerce, secrets=["SHOP_API_KEY"], actor=admin)
    set_policy(ecommerce)
    submission = pending(api, ecommerce, NO_TOOL)
    line = secrets_line(reviewer_client.get(f"/reviews/{submission.pk}/").content.decode())
    assert "(not set, the sandbox's: every tool's, for the whole run)" in line


@pytest.mark.parametrize("body", [RECEIPT, NO_TOOL], ids=["send_receipt", "no tool"])
def test_the_page_lists_the_secrets_the_approved_run_is_handed(
    api, shop, reviewer_client, body
) -> None:
    submission = pending(api, shop, body)
    page = reviewer_client.get(f"/reviews/{submission.pk}/").content.decode()
    listed = re.findall(r"<code>(\w+)</code>", secrets_line(page))
    response = reviewer_client.post(f"/reviews/{submission.pk}/approve/", approve_form(page))
    assert response.status_code in (200, 302)
    # What the worker hands the run it claims (no worker takes it in these tests).
    run = Run.objects.get(submission__pk=submission.pk)
    tag = sandbox_builder(shop).image_tag(shop.name)
    prepared = run_claim_prepare(run_id=run.pk, worker="w1@host", known_images=frozenset({tag}))
    assert sorted(prepared.request.secrets) == sorted(listed)
