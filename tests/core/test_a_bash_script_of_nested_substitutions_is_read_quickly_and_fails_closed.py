"""The gate reads a bash script of deeply nested substitutions in bounded time, failing closed.

It reads every `$(...)` on its own as well (bashkit's analysis skips some places), so a script
of n nested ones had n texts of up to its whole length found (each by a scan to its closing
parenthesis) and analysed: 16 KB of `$(echo ` took over a minute of the web process's CPU (an
Auto loop's script, or an agent's submission), and the limit of 100 000 characters far longer.
Past a budget of text to read the reading stops and doubts every tool: a person decides.
"""

from __future__ import annotations

import time

from jazzmine.gate import read_calls

TOOLS = ["get_orders", "update_order_status"]


def nested(depth: int) -> str:
    return "echo " + "$(echo " * depth + "hi" + ")" * depth + "\n"


def test_deeply_nested_substitutions_are_read_within_a_second_and_may_call_any_tool() -> None:
    started = time.monotonic()
    reading = read_calls(nested(1500), language="bash", tools=TOOLS)
    elapsed = time.monotonic() - started
    assert elapsed < 1.0, f"reading took {elapsed:.1f} s"
    assert reading.may_call("update_order_status") and reading.may_call("get_orders")


def test_a_few_nested_substitutions_are_still_read_one_by_one() -> None:
    script = 'x="${y:-$(update_order_status --order_id "$(get_orders)")}"\necho "$x"\n'
    reading = read_calls(script, language="bash", tools=TOOLS)
    assert reading.tools == ["get_orders", "update_order_status"]
    assert not any(doubt.tools == frozenset({"*"}) for doubt in reading.uncertain)
