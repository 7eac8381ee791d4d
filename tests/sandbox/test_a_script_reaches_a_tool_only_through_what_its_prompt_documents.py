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


def add_to_cart(items: list, cart: list = []) -> ToolResponse:
    """Add lines ({"sku", "qty"}) to the cart: 1 to 5 units each."""
    lines = list(items)
    if any(not isinstance(line, dict) or not 1 <= line.get("qty", 0) <= 5 for line in lines):
        return ToolResponse(success=False, message="each line is 1 to 5 units")
    cart.extend(lines)
    return ToolResponse(success=True, data={"total": sum(25 * line["qty"] for line in cart)})


def ship(sku: str, blocked: list = ["X"]) -> ToolResponse:
    """Ship a SKU unless it is blocked; a refusal's message is the block list itself."""
    if sku in blocked:
        return ToolResponse(success=False, message=blocked)
    return ToolResponse(success=True, data={"shipped": sku})


def limits(which: str = "all", table: dict = {"A": {"max_qty": 10}}) -> ToolResponse:
    """Return the live table's values: no ToolResponse at all."""
    return table.values()


def spawn(label: str) -> ToolResponse:
    """Start a process that would outlive the call, were the call's clean-up skipped."""
    import os

    os.posix_spawnp("sleep", ["sleep", "20"], dict(os.environ))
    return ToolResponse(success=True, data={"label": label})


def children(label: str) -> ToolResponse:
    """List the processes below the sandbox's worker during this call."""
    import os

    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                parent = int(handle.read().rsplit(b")", 1)[1].split()[1])
        except OSError:
            continue
        if parent == os.getpid():
            found.append(pid)
    return ToolResponse(success=True, data={"label": label, "children": found})


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
        add_to_cart: [ToolParameter("items", "list")],
        ship: [ToolParameter("sku", "str")],
        limits: [ToolParameter("which", "str", required=False)],
        spawn: [ToolParameter("label", "str")],
        children: [ToolParameter("label", "str")],
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
    ("call", "named"),
    [
        ('quote("A", token="x")', "parameter 'token'"),
        ('quote("A", 1, {}, api_base="http://elsewhere")', "parameter 'api_base'"),
        ("refund(amounts=[1], extra=2, more=3)", "parameter 'extra'"),
        ('quote("A", 1, {}, {})', "4 positional arguments (it documents 2)"),
    ],
)
def test_a_call_python_cannot_bind_still_names_what_is_undocumented(registry, runtime, call, named):
    # Python would say "unexpected keyword argument": the script's author (an LLM reading
    # the error on its retry) learns instead what it may pass.
    script = f"r = {call}\nemit_result([r.success, r.message])\n"
    succeeded, message = result_of(registry, runtime, script)
    assert succeeded is False
    assert f"a script may not pass it {named}" in message and "Pass only the parameters" in message


def test_a_call_missing_a_documented_parameter_fails_as_python_says(registry, runtime) -> None:
    succeeded, message = result_of(
        registry, runtime, "r = quote(qty=2)\nemit_result([r.success, r.message])\n"
    )
    assert succeeded is False and "missing 1 required positional argument: 'sku'" in message


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


@pytest.mark.parametrize(
    "handed",
    [
        "iter([line])",
        "(x for x in [line])",
        "map(lambda x: x, [line])",
        "{'a': line}.values()",
        "filter(None, [line])",
    ],
)
def test_a_view_or_an_iterator_hands_the_tool_copies(registry, runtime, handed) -> None:
    # Passed as they were, each handed the tool the script's own dict, live.
    script = f"""line = {{"sku": "A", "qty": 2}}
first = add_to_cart({handed})
line["qty"] = 1000000
emit_result([first.data, add_to_cart([]).data])
"""
    first, after = result_of(registry, runtime, script)
    assert after == first  # the edit after the call changed nothing the tool kept


def test_a_message_is_a_copy_too(registry, runtime) -> None:
    script = """blocked = ship("X").message
blocked.clear()
again = ship("X")
emit_result([again.success, again.message])
"""
    assert result_of(registry, runtime, script) == [False, ["X"]]


def test_what_a_tool_returns_other_than_a_response_is_a_copy_too(registry, runtime) -> None:
    script = """for entry in limits():
    entry["max_qty"] = 1000000
emit_result(list(limits()))
"""
    assert result_of(registry, runtime, script) == [{"max_qty": 10}]


@pytest.mark.parametrize("handed", ["print", "ValueError([1])", "slice(1)", "lambda: [1]"])
def test_what_is_not_data_is_not_handed_to_a_tool(registry, runtime, handed) -> None:
    script = f"r = refund({handed})\nemit_result([r.success, r.message])\n"
    succeeded, message = result_of(registry, runtime, script)
    assert succeeded is False and "cannot be handed across a tool call" in message


def test_a_call_near_the_recursion_limit_is_refused_and_its_clean_up_always_runs(
    registry, runtime
) -> None:
    # Called a few frames below Python's limit, the call's clean-up raised RecursionError
    # half-way: the tool had run, and its process lived on into the next tool's call.
    script = """def depth(n):
    try:
        return depth(n + 1)
    except RecursionError:
        return n

limit = depth(0)

def at(n, k):
    if n < k:
        return at(n + 1, k)
    try:
        r = spawn("deep")
        return r.message or "ran"
    except RecursionError:
        return "raised"

seen = []
for k in range(limit - 200, limit):
    try:
        seen.append(at(0, k))
    except RecursionError:
        seen.append("raised")
emit_result([seen, children("after").data["children"]])
"""
    seen, alive = result_of(registry, runtime, script)
    assert "ran" in seen  # far enough from the limit, the call runs as before
    assert any("nested too deep" in outcome for outcome in seen)
    assert set(seen) <= {"ran", "raised"} | {o for o in seen if "nested too deep" in o}
    assert alive == []  # what each call started ended with it
