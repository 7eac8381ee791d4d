"""A tool's save reads its source once, though the form and the service both check its fields.

The service's check stays (the API and the import have no form); the read of a big source is a
trip to the checker process of up to a second, and the save made it twice. The service now
takes the read just made of exactly the same fields. Any field that differs is read afresh, and
a read that fails is never kept.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import tools as tool_services
from jazzmine_web.catalog.services.tools import tool_spec_check
from jazzmine_web.studio.checker import PROCESS_THRESHOLD_CHARS
from tests.web.checker import post_form

pytestmark = [pytest.mark.django_db(transaction=True)]


def big_tool(name: str, arg: str = "x") -> str:
    """Return a valid source long enough to be read in the checker process."""
    head = f"def {name}({arg}: int) -> int:\n    a = ["
    end = f"]\n    return {arg} + len(a)\n"
    return head + "b," * ((PROCESS_THRESHOLD_CHARS + 2_000) // 2) + end


@pytest.fixture
def reads(monkeypatch) -> list[int]:
    """Count the sources sent to be read (by their size), as the service sends them."""
    seen: list[int] = []
    real = tool_services.checked

    def counted(chars, fn, *args, **kwargs):
        if fn is tool_services.tool_source_read:
            seen.append(chars)
        return real(chars, fn, *args, **kwargs)

    monkeypatch.setattr(tool_services, "checked", counted)
    monkeypatch.setattr(tool_services, "_reads", type(tool_services._reads)())
    return seen


def _spec(source: str, **fields) -> dict:
    return {
        "name": "",
        "description": "Count.",
        "parameters": [],
        "dependencies": [],
        "secrets": [],
        "source": source,
        "sandbox_name": "shop",
        **fields,
    }


async def test_a_save_through_the_form_reads_the_source_once(member, empty_sandbox, reads):
    source = big_tool("count_orders")
    fields = {"name": "count_orders", "description": "Count.", "source": source, "kind": "python"}
    status, page = await post_form(
        f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/", fields, member
    )
    assert status == 302, page[:500]
    assert len(reads) == 1, reads
    # Saved as read: the second check's answer is the first's.
    tool = await Tool.objects.aget(name="count_orders")
    assert (tool.source.strip(), tool.function_name) == (source.strip(), "count_orders")


def test_every_field_that_differs_is_read_again(reads):
    source = big_tool("count_orders")
    first = tool_spec_check(**_spec(source))
    assert tool_spec_check(**_spec(source)) is first
    assert len(reads) == 1
    variants = [
        _spec(source, sandbox_name="other"),
        _spec(source, name="tally"),
        _spec(source, description="Count the orders."),
        _spec(source, parameters=[{"name": "x", "type": "integer", "description": "n"}]),
        _spec(source, parameters=[{"name": "x", "type": "integer", "description": "m"}]),
        _spec(source, dependencies=["requests==2.32.3"]),
        _spec(source, secrets=["SHOP_KEY"]),
        _spec(source + "\n"),
    ]
    registered = [tool_spec_check(**spec) for spec in variants]
    assert len(reads) == 1 + len(variants)
    assert registered[0].sandbox_name == "other" and registered[1].name == "tally"
    assert [p.description for p in registered[4].tool.parameters] == ["m"]
    assert registered[6].secrets == ["SHOP_KEY"]


def test_a_refused_read_is_refused_every_time(reads):
    broken = big_tool("count_orders")[:-40]  # cut inside the list: no valid Python
    for _ in range(2):
        with pytest.raises(ValidationError):
            tool_spec_check(**_spec(broken))
    assert len(reads) == 2
    # A parameter the function does not take is refused though its source was read before.
    source = big_tool("count_orders")
    tool_spec_check(**_spec(source))
    with pytest.raises(ValidationError, match=r"documents parameters \['y'\]"):
        tool_spec_check(**_spec(source, parameters=[{"name": "y", "type": "integer"}]))
