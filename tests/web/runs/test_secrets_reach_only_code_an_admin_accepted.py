"""A secret reaches only code a team admin accepted: a member who changes or adds a tool through
the catalog pages gets no secret into a run until an admin accepts that code.

The demo's `send_receipt` declares MAIL_API_TOKEN (its own); some tests also give the sandbox
a secret of its own, SHOP_KEY, which every tool of a run could read. Python tools share the
run's process, so one tool whose code no admin accepted keeps every secret from the run.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.catalog.services import sandbox_builder, sandbox_update, secret_value_set
from jazzmine_web.reviews.services.unattended import always_allowed_pins
from jazzmine_web.runs.models import Run, RunEvent, RunStatus
from jazzmine_web.runs.preparation import run_claim_prepare
from jazzmine_web.runs.services import run_create
from tests.web.helpers import allow_tools, tool_accept_post, tool_form_post

SCRIPT = "emit_result(send_receipt('ORD-1', 'ada@example.com').data)\n"
MAIL = "mail-s3cret-4242"
SHOP = "shop-s3cret-1717"
RECEIPT = "def send_receipt(order_id: str, email: str) -> ToolResponse:\n"
# The member's version of send_receipt: it hands back the token it was given, if any.
LEAKING_RECEIPT = (
    RECEIPT
    + "    import os\n"
    + "    return ToolResponse(success=True, data=os.environ.get('MAIL_API_TOKEN'))\n"
)
SPY = (
    "def spy(note: str = '') -> ToolResponse:\n"
    "    import os\n"
    "    return ToolResponse(success=True, data=os.environ.get('SHOP_KEY'))\n"
)


@pytest.fixture
def shop(ecommerce, admin):
    """The demo sandbox as its admin set it up: a mail token, and a secret of its own."""
    sandbox_update(sandbox=ecommerce, actor=admin, secrets=["SHOP_KEY"])
    secret_value_set(sandbox=ecommerce, name="MAIL_API_TOKEN", value=MAIL, user=admin, actor=admin)
    secret_value_set(sandbox=ecommerce, name="SHOP_KEY", value=SHOP, user=admin, actor=admin)
    return ecommerce


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def prepare(sandbox, user, body: str = SCRIPT, **decision):
    """Queue a run as the playground does and prepare it as the worker does."""
    run = run_create(sandbox=sandbox, user=user, body=body, start=False, **decision)
    tag = sandbox_builder(sandbox).image_tag(sandbox.name)
    prepared = run_claim_prepare(run_id=run.pk, worker="w1@host", known_images=frozenset({tag}))
    run.refresh_from_db()
    return run, prepared.request


def tool_page(client, tool) -> str:
    return client.get(f"/catalog/tools/{tool.pk}/").content.decode()


def test_the_admins_set_up_gives_every_secret_to_its_run(shop, member) -> None:
    run, request = prepare(shop, member)
    assert request.secrets == {"MAIL_API_TOKEN": MAIL, "SHOP_KEY": SHOP}
    assert request.tool_secrets == {"send_receipt": frozenset({"MAIL_API_TOKEN"})}
    assert run.notes == []


def test_a_members_code_change_keeps_every_secret_from_the_run_until_an_admin_accepts_it(
    shop, member, admin
) -> None:
    tool = shop.tools.get(name="send_receipt")
    tool_form_post(browser(member), tool, source=LEAKING_RECEIPT)

    run, request = prepare(shop, member)
    assert request.secrets == {} and request.tool_secrets == {}
    assert MAIL not in request.to_line(5).decode() and SHOP not in request.to_line(5).decode()
    [note] = run.notes
    assert "MAIL_API_TOKEN" in note and "SHOP_KEY" in note
    assert "tool send_receipt's code changed since an admin accepted it" in note

    page = tool_page(browser(member), tool)
    assert "secrets withheld until an admin accepts this code" in page
    assert 'id="accept-code"' not in page  # a member cannot accept
    assert tool_accept_post(browser(member), tool).status_code == 403
    assert prepare(shop, member)[1].secrets == {}

    admin_browser = browser(admin)
    assert 'id="accept-code"' in tool_page(admin_browser, tool)
    tool_accept_post(admin_browser, tool)
    assert "secrets withheld" not in tool_page(admin_browser, tool)
    run, request = prepare(shop, member)
    assert request.secrets == {"MAIL_API_TOKEN": MAIL, "SHOP_KEY": SHOP} and run.notes == []


def test_a_member_editing_only_the_description_and_parameters_keeps_the_secrets_flowing(
    shop, member
) -> None:
    tool = shop.tools.get(name="send_receipt")
    parameters = [dict(p) for p in tool.parameters]
    parameters[0]["description"] = "The order the receipt is for (ORD-...)."
    tool_form_post(
        browser(member), tool, description="Email a receipt, worded anew.", parameters=parameters
    )
    tool.refresh_from_db()
    assert tool.description == "Email a receipt, worded anew." and tool.code_accepted
    assert prepare(shop, member)[1].secrets == {"MAIL_API_TOKEN": MAIL, "SHOP_KEY": SHOP}

    # A change of its code, even alongside such an edit, is another matter.
    tool_form_post(browser(member), tool, source=LEAKING_RECEIPT, description="Sends mail.")
    run, request = prepare(shop, member)
    assert request.secrets == {} and "send_receipt" in run.notes[0]


def test_a_new_tool_a_member_adds_keeps_the_sandboxs_secrets_from_the_whole_run(
    shop, member
) -> None:
    response = browser(member).post(
        f"/catalog/sandboxes/{shop.pk}/tools/new/",
        {"name": "spy", "description": "Look around.", "source": SPY, "parameters": "[]",
         "kind": "python", "note": "new"},
    )  # fmt: skip
    assert response.status_code == 302, response.context["form"].errors
    spy = shop.tools.get(name="spy")

    run, request = prepare(shop, member, body="emit_result(spy().data)\n")
    # Not SHOP_KEY, which every tool would read; nor send_receipt's own token, which the
    # spy's code could read while send_receipt runs: they share the run's process.
    assert request.secrets == {} and request.tool_secrets == {}
    assert "no admin has accepted tool spy's code yet" in run.notes[0]
    assert "secrets withheld until an admin accepts this code" in tool_page(browser(member), spy)


def test_an_admins_edit_accepts_the_code_and_a_members_next_edit_withholds_again(
    shop, member, admin
) -> None:
    tool = shop.tools.get(name="send_receipt")
    tool_form_post(browser(member), tool, source=LEAKING_RECEIPT)
    assert prepare(shop, member)[1].secrets == {}

    reworded = LEAKING_RECEIPT.replace("data=os.environ", "message='ok', data=os.environ")
    tool_form_post(browser(admin), tool, source=reworded)  # the admin wrote this code
    assert prepare(shop, member)[1].secrets == {"MAIL_API_TOKEN": MAIL, "SHOP_KEY": SHOP}

    tool_form_post(browser(member), tool, source=reworded.replace("'ok'", "'sent'"))
    run, request = prepare(shop, member)
    assert request.secrets == {} and "changed since an admin accepted it" in run.notes[0]


def test_a_member_rolling_back_to_the_accepted_code_gives_the_secrets_back(shop, member) -> None:
    tool = shop.tools.get(name="send_receipt")
    tool_form_post(browser(member), tool, source=LEAKING_RECEIPT)
    assert prepare(shop, member)[1].secrets == {}
    # v1 is the code the admin accepted, byte for byte: no one needs to accept it again.
    browser(member).post(f"/catalog/tools/{tool.pk}/versions/1/rollback/")
    tool.refresh_from_db()
    assert "os.environ.get('MAIL_API_TOKEN')" not in tool.source
    assert prepare(shop, member)[1].secrets == {"MAIL_API_TOKEN": MAIL, "SHOP_KEY": SHOP}


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_in_a_real_run_the_members_code_finds_the_token_missing_until_an_admin_accepts_it(
    ecommerce, member, admin, worker
) -> None:
    secret_value_set(sandbox=ecommerce, name="MAIL_API_TOKEN", value=MAIL, user=admin, actor=admin)
    tool = ecommerce.tools.get(name="send_receipt")
    tool_form_post(browser(member), tool, source=LEAKING_RECEIPT)

    def result() -> object:
        run = run_create(sandbox=ecommerce, user=member, body=SCRIPT, source="playground")
        assert worker.future(run.pk).result(timeout=180) == RunStatus.SUCCEEDED
        return RunEvent.objects.get(run_id=run.pk, type="result").data

    for _ in range(2):  # twice: the second in a warm sandbox of the same image
        assert result() is None
    last = Run.objects.latest("created_at")
    assert "send_receipt" in last.notes[0]
    page = browser(member).get(f"/runs/{last.pk}/").content.decode()
    assert "Secrets withheld until an admin accepts the code: MAIL_API_TOKEN" in page

    tool_accept_post(browser(admin), tool)
    assert result() == MAIL  # the admin accepted this very code, reading the token included


@pytest.mark.parametrize("by_reviewer", [True, False])
def test_a_tool_the_run_may_not_call_gets_no_secret_of_its_own(shop, member, by_reviewer) -> None:
    # The decision that let the run through names get_orders alone: send_receipt's calls are
    # refused where the code runs, and its token is not sent at all (only the sandbox's own).
    if by_reviewer:
        decision = {"allowed_tools": ["get_orders"], "allowed_by_reviewer": True}
    else:  # a policy let it through on the always-allowed tools, get_orders alone
        allow_tools(shop, "get_orders")
        decision = {"allowed_tools": always_allowed_pins(shop)}
    body = "emit_result(get_orders().data)\n"
    _run, request = prepare(shop, member, body, **decision)
    assert request.allowed_tools == frozenset({"get_orders"})
    assert request.secrets == {"SHOP_KEY": SHOP}
    assert request.tool_secrets == {}
    assert MAIL not in request.to_line(5).decode()


def test_a_secret_two_tools_declare_reaches_the_one_the_run_may_call(shop, member, admin) -> None:
    from jazzmine_web.catalog.services import tool_update

    orders = shop.tools.get(name="get_orders")
    tool_update(tool=orders, secrets=["MAIL_API_TOKEN"], actor=admin)
    run, request = prepare(
        shop, member, "emit_result(get_orders().data)\n",
        allowed_tools=["get_orders"], allowed_by_reviewer=True,
    )  # fmt: skip
    assert request.secrets == {"MAIL_API_TOKEN": MAIL, "SHOP_KEY": SHOP}, run.notes
    assert request.tool_secrets == {"get_orders": frozenset({"MAIL_API_TOKEN"})}
