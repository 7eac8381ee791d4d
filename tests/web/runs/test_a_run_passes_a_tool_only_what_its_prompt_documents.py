"""A run tells its sandbox what each tool documents, and a script passes a tool nothing else.

The harness refuses an argument a tool's prompt does not document
(tests/sandbox/test_a_script_reaches_a_tool_only_through_what_its_prompt_documents.py); these
show the runs of the web app send it the names, from the registry the run was claimed with,
so a function's extra parameter (here one that widens what it returns) stays out of reach.
"""

from __future__ import annotations

import json

import pytest

from jazzmine_web.catalog.services import tool_create, tool_update
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.preparation import run_claim_prepare
from jazzmine_web.runs.services import run_create
from tests.web.helpers import accept_code

WIDE = """def lookup_customer(customer_id: str, include_private: bool = False) -> ToolResponse:
    data = {"id": customer_id}
    if include_private:
        data["card"] = "4111 1111 1111 1111"
    return ToolResponse(success=True, data=data)
"""
CALLS = """plain = lookup_customer("C-1")
wide = lookup_customer("C-1", include_private=True)
emit_result([plain.data, wide.success, wide.message, wide.data])
"""


@pytest.fixture
def wide(ecommerce, member):
    tool = tool_create(
        sandbox=ecommerce, name="lookup_customer", description="Look a customer up.",
        source=WIDE, parameters=[{"name": "customer_id", "type": "str"}], author=member,
    )  # fmt: skip
    accept_code(ecommerce, "lookup_customer")
    return tool


@pytest.mark.django_db
def test_the_request_names_each_tools_documented_parameters(ecommerce, member, wide) -> None:
    run = run_create(sandbox=ecommerce, user=member, body=CALLS, start=False)
    prepared = run_claim_prepare(run_id=run.pk, worker="w@test", known_images=frozenset())
    assert prepared is not None
    expected = {t.name: frozenset(p["name"] for p in t.parameters) for t in ecommerce.tools.all()}
    assert prepared.request.tool_parameters == expected
    assert expected["lookup_customer"] == {"customer_id"}
    line = prepared.request.payload(30.0)
    assert line["tool_parameters"]["lookup_customer"] == ["customer_id"]


@pytest.mark.django_db
def test_a_parameter_documented_since_is_sent_with_the_next_run(ecommerce, member, wide) -> None:
    parameters = [
        {"name": "customer_id", "type": "str"},
        {"name": "include_private", "type": "bool"},
    ]
    tool_update(tool=wide, author=member, note="document it", parameters=parameters)
    accept_code(ecommerce, "lookup_customer")
    run = run_create(sandbox=ecommerce, user=member, body=CALLS, start=False)
    prepared = run_claim_prepare(run_id=run.pk, worker="w@test", known_images=frozenset())
    assert prepared.request.tool_parameters["lookup_customer"] == {"customer_id", "include_private"}


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_a_script_cannot_set_what_the_prompt_never_documents(ecommerce, member, wide, worker):
    run = run_create(sandbox=ecommerce, user=member, body=CALLS)
    assert worker.future(run.pk).result(timeout=180) == RunStatus.SUCCEEDED
    plain, succeeded, message, data = Run.objects.get(pk=run.pk).result
    assert plain == {"id": "C-1"}
    assert (succeeded, data) == (False, None)
    assert "a script may not pass it parameter 'include_private'" in message
    assert "4111" not in json.dumps(Run.objects.get(pk=run.pk).result)


SECRET_HOLDER = """def lookup_stock(sku: str, backend: str = "https://stock.example.com/api") -> ToolResponse:
    import os
    key = os.environ.get("STOCK_KEY", "")
    return ToolResponse(success=True, data={"url": backend + "/items/" + sku, "key": key})
"""


@pytest.fixture
def stock(ecommerce, admin):
    from jazzmine_web.catalog.services import secret_value_set

    tool = tool_create(
        sandbox=ecommerce, name="lookup_stock", description="Look stock up.",
        source=SECRET_HOLDER, parameters=[{"name": "sku", "type": "str"}], author=admin,
        secrets=["STOCK_KEY"], always_allow=True,
    )  # fmt: skip
    accept_code(ecommerce, "lookup_stock")
    secret_value_set(sandbox=ecommerce, name="STOCK_KEY", value="stock-KEY-0099zz", user=admin)
    tool.refresh_from_db()
    assert tool.code_accepted
    return tool


@pytest.mark.django_db
def test_a_member_who_documents_a_hidden_parameter_leaves_the_code_to_be_accepted_again(
    ecommerce, member, admin, stock
) -> None:
    # The admin accepted a function whose `backend` is its own, never a script's to set;
    # documenting it (nothing else edited) let a script aim the secret at any host.
    documented = [{"name": "sku", "type": "str"}, {"name": "backend", "type": "str"}]
    tool_update(tool=stock, author=member, actor=member, note="doc", parameters=documented)
    stock.refresh_from_db()
    assert not stock.code_accepted
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    prepared = run_claim_prepare(run_id=run.pk, worker="w@test", known_images=frozenset())
    assert "STOCK_KEY" not in json.dumps(prepared.request.payload(30.0))
    assert "stock-KEY-0099zz" not in json.dumps(prepared.request.payload(30.0))
    # Documented back as it was, the code is the accepted code again.
    tool_update(tool=stock, author=member, actor=member, note="undo", parameters=documented[:1])
    stock.refresh_from_db()
    assert stock.code_accepted


@pytest.mark.django_db
def test_an_admin_who_documents_a_parameter_accepts_what_they_saved(ecommerce, admin, stock):
    documented = [{"name": "sku", "type": "str"}, {"name": "backend", "type": "str"}]
    tool_update(tool=stock, author=admin, actor=admin, note="doc", parameters=documented)
    stock.refresh_from_db()
    assert stock.code_accepted
