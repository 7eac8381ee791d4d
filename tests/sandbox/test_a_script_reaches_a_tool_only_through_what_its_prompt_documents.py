"""A script reaches a tool only through the parameters its prompt documents, and only by copy.

A tool is trusted code that enforces its own rules (here: at most 10 units, at 25 each) and
may keep state between calls (a cache in a mutable default, a list it stores). The validator
accepts each script below: it is plain Python. Before, the harness handed a tool's own
objects to the script and the script's to the tool, and forwarded any argument the function
took: a script could edit the cached item a tool returned (`max_qty = 10**6`, `unit_price = 0`)
and the next call obeyed the edit; change a list after the tool had checked and stored it; or
set a parameter the prompt never mentions (`cache=`) by keyword or by position. An LLM is only
told of what a prompt documents; the rest is how a hostile script steers a tool past its rules.

The harness runs as a plain subprocess here, as in test_harness.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jazzmine.core.tools import (
    SandboxConfig,
    ToolParameter,
    ToolRegistry,
    ToolResponse,
    validate_script,
)
from jazzmine.sandbox import RunRequest
from jazzmine.sandbox.runtime import stage_runtime

from .helpers import harness_events

SANDBOX = "shop"


def quote(sku: str, qty: int = 1, cache: dict = {}) -> ToolResponse:
    """Price `qty` units of a SKU: at most `max_qty`, at `unit_price` each (cached per SKU)."""
    if sku not in cache:
        cache[sku] = {"sku": sku, "unit_price": 25, "max_qty": 10}
    item = cache[sku]
    if qty > item["max_qty"]:
        return ToolResponse(success=False, message=f"at most {item['max_qty']} units")
    return ToolResponse(success=True, data={"item": item, "total": qty * item["unit_price"]})


def refund(amounts: list, kept: list = []) -> ToolResponse:
    """Refund amounts of at most 100 each; the total of every refund so far."""
    if any(not isinstance(a, int) or a > 100 for a in amounts):
        return ToolResponse(success=False, message="each refund is at most 100")
    kept.append(amounts)
    return ToolResponse(success=True, data={"refunded": sum(sum(a) for a in kept)})


def search(**filters) -> ToolResponse:
    """Search orders by the filters given."""
    return ToolResponse(success=True, data={"filters": sorted(filters)})


def lookup(*args, **kwargs) -> ToolResponse:
    """Read positional arguments as the documented parameters in order (a script tool's way)."""
    return ToolResponse(success=True, data={"args": list(args), "kwargs": sorted(kwargs)})


def shape(value: list) -> ToolResponse:
    """Say how the list it was given is put together."""
    return ToolResponse(
        success=True, data={"shared": value[0] is value[1], "cycle": value[2] is value}
    )


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=SANDBOX))
    documented = {
        quote: [ToolParameter("sku", "str"), ToolParameter("qty", "int", required=False)],
        refund: [ToolParameter("amounts", "list")],
        search: [ToolParameter("status", "str")],
        lookup: [ToolParameter("sku", "str"), ToolParameter("field", "str")],
        shape: [ToolParameter("value", "list")],
    }
    for function, parameters in documented.items():
        registry.register_function(function, description=function.__doc__, parameters=parameters,
                                   dependencies=[], secrets=[], sandbox=SANDBOX)  # fmt: skip
    return registry


@pytest.fixture(scope="module")
def runtime(registry: ToolRegistry, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return stage_runtime(tmp_path_factory.mktemp("runtime"), registry.tools(SANDBOX))


def result_of(registry: ToolRegistry, runtime: Path, script: str) -> object:
    """Run a script as the web's runs do (its tools' documented parameters sent); its result."""
    assert validate_script(script, registry.tool_names(SANDBOX)) == []  # the harness is the wall
    request = RunRequest(script=script, tool_parameters={
        tool: frozenset(names) for tool, names in registry.tool_parameter_names(SANDBOX).items()
    })  # fmt: skip
    events = harness_events(runtime, request.to_line(30.0))
    results = [e["data"] for e in events if e["type"] == "result"]
    assert len(results) == 1, events
    return results[0]


def test_editing_what_a_tool_returned_changes_nothing_it_keeps(registry, runtime) -> None:
    script = """first = quote("A", 1)
item = first.data["item"]
item["max_qty"] = 1000000
item["unit_price"] = 0
second = quote("A", 500)
third = quote("A", 2)
emit_result([item, second.success, second.message, third.data])
"""
    edited, succeeded, message, third = result_of(registry, runtime, script)
    assert edited["max_qty"] == 1000000  # the script's own copy is the script's to change
    assert (succeeded, message) == (False, "at most 10 units")
    assert third == {"item": {"sku": "A", "unit_price": 25, "max_qty": 10}, "total": 50}


def test_changing_an_argument_after_the_call_changes_nothing_the_tool_kept(registry, runtime):
    script = """mine = [40, 50]
refund(mine)
mine.append(1000000)
nested = [[30]]
refund(nested[0])
nested[0].append(1000000)
emit_result(refund([]).data)
"""
    assert result_of(registry, runtime, script) == {"refunded": 120}


@pytest.mark.parametrize(
    "call",
    [
        'quote("A", 500, cache={"A": {"sku": "A", "unit_price": 0, "max_qty": 1000000}})',
        'quote("A", 500, {"A": {"sku": "A", "unit_price": 0, "max_qty": 1000000}})',
        'quote(sku="A", qty=500, **{"cache": {"A": {"sku": "A", "unit_price": 0, "max_qty": 10**6}}})',
        'quote(*["A", 500, {"A": {"sku": "A", "unit_price": 0, "max_qty": 1000000}}])',
        "refund([1], [])",
        "refund([1], kept=[])",
    ],
)
def test_a_parameter_the_prompt_never_documents_cannot_be_passed(registry, runtime, call):
    script = f"r = {call}\nemit_result([r.success, r.message, r.data])\n"
    succeeded, message, data = result_of(registry, runtime, script)
    assert succeeded is False and data is None
    assert "a script may not pass it" in message and "Pass only the parameters" in message


def test_the_refusal_names_what_was_passed_and_what_may_be(registry, runtime) -> None:
    script = 'emit_result(quote("A", cache={}).message)\n'
    message = result_of(registry, runtime, script)
    assert "parameter 'cache'" in message and "(qty, sku)" in message


@pytest.mark.parametrize(
    ("call", "passes"),
    [
        ('search(status="open")', True),
        ('search(status="open", customer="x")', False),
        ('search(**{"status": "open", "limit": 10})', False),
        ('lookup("A", "price")', True),
        ('lookup("A", field="price")', True),
        ('lookup("A", "price", "extra")', False),
        ('lookup("A", token="x")', False),
    ],
)
def test_a_catch_all_signature_takes_only_the_documented_names(registry, runtime, call, passes):
    script = f"r = {call}\nemit_result([r.success, r.message])\n"
    succeeded, message = result_of(registry, runtime, script)
    assert succeeded is passes, message


def test_documented_calls_go_through_as_before(registry, runtime) -> None:
    script = """a = quote("B", 2)
b = quote(sku="B", qty=3)
c = quote("B")
emit_result([a.data["total"], b.data["total"], c.data["total"], refund(amounts=[5]).data])
"""
    assert result_of(registry, runtime, script) == [50, 75, 25, {"refunded": 5}]


def test_a_shared_part_and_a_cycle_cross_as_they_are(registry, runtime) -> None:
    script = """part = [1]
loop = [part, part]
loop.append(loop)
emit_result(shape(loop).data)
"""
    assert result_of(registry, runtime, script) == {"shared": True, "cycle": True}


def test_a_request_that_does_not_say_what_tools_take_lets_no_argument_through(runtime) -> None:
    # A missing key is as malformed as a wrong one: fail closed, as for allowed_tools.
    line = json.dumps({"script": 'emit_result(quote("A").message)', "allowed_tools": None,
                       "tool_secrets": {}, "secrets": {}, "timeout": 30}).encode() + b"\n"  # fmt: skip
    events = harness_events(runtime, line)
    (result,) = [e["data"] for e in events if e["type"] == "result"]
    assert "a script may not pass it parameter 'sku'" in result
    assert any("tool_parameters is malformed" in json.dumps(e) for e in events)
