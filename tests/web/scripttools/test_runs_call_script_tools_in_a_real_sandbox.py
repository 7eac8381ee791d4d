"""Runs in a real sandbox: a Python script calls a script tool; bash pipes two tools through jq."""

from __future__ import annotations

import pytest

from jazzmine_web.catalog.services import script_tool_save, tool_create
from jazzmine_web.runs.models import RunStatus
from jazzmine_web.runs.selectors import run_events_after
from jazzmine_web.runs.services import run_create
from jazzmine_web.scripttools.services import script_tool_publish

from .conftest import rsi_tool, trial_recorded

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

PICK = """
def pick_symbol(market: str = "us") -> ToolResponse:
    return ToolResponse(success=True, data={"symbol": "AAPL", "market": market})
"""


@pytest.fixture
def quant(sandbox, member, base_image):
    """The sandbox with a published script tool and a Python tool."""
    row, _ = script_tool_save(sandbox=sandbox, tool=rsi_tool(), author=member)
    trial_recorded(row)
    script_tool_publish(tool=row)
    tool_create(
        sandbox=sandbox,
        name="pick_symbol",
        description="Pick the symbol to look at",
        source=PICK,
        parameters=[{"name": "market", "type": "str", "description": "Market", "default": "us"}],
    )
    return sandbox


def test_a_python_script_calls_a_script_tool_as_a_function(quant, member, worker) -> None:
    body = (
        'r = calculate_rsi(symbol="AAPL", period=14)\n'
        'emit_intermediate("rsi", r.data)\n'
        'emit_result({"ok": r.success, "rsi": r.data["rsi"], "label": r.data["label"]})\n'
    )
    run = run_create(sandbox=quant, user=member, body=body)
    assert worker.future(run.pk).result(timeout=300) == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert run.result["ok"] is True
    assert run.result["label"] in ("overbought", "oversold", "neutral")
    assert isinstance(run.result["rsi"], float)


def test_a_bash_script_pipes_two_tools_through_jq_with_its_trace(quant, member, worker) -> None:
    body = (
        "sym=$(pick_symbol --market us | jq -r .symbol)\n"
        'calculate_rsi --symbol "$sym" --period 14 | jq -c "{symbol, label}"\n'
    )
    run = run_create(sandbox=quant, user=member, body=body, language="bash")
    assert run.language == "bash" and run.script == body
    assert worker.future(run.pk).result(timeout=300) == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert run.outcome == "result"
    assert run.result["exit_code"] == 0
    assert run.result["json"]["symbol"] == "AAPL"
    events = run_events_after(run)
    assert [e["type"] for e in events] == ["intermediate", "intermediate", "result", "exit"]
    first, second = (e["data"]["data"] for e in events[:2])
    assert first["name"] == "pick_symbol" and first["args"] == {"market": "us"}
    assert second["name"] == "calculate_rsi"
    assert second["args"] == {"symbol": "AAPL", "period": 14}
    assert first["exit_status"] == 0 and second["exit_status"] == 0
    assert second["duration_ms"] > 0
    assert events[0]["data"]["label"].startswith("$ pick_symbol (ok")


def test_a_failing_bash_script_ends_as_a_script_error_with_its_stderr(
    quant, member, worker
) -> None:
    body = 'calculate_rsi --symbol ""\n'  # passes the schema; the script itself exits 1
    run = run_create(sandbox=quant, user=member, body=body, language="bash")
    assert worker.future(run.pk).result(timeout=300) == RunStatus.FAILED
    run.refresh_from_db()
    events = run_events_after(run)
    calls = [e["data"]["data"] for e in events if e["type"] == "intermediate"]
    assert calls[0]["exit_status"] == 1
    assert "missing required parameter: symbol" in calls[0]["error"]
    assert run.outcome == "script_error"
    assert "symbol" in run.error


def test_bashkit_checks_builtin_arguments_against_the_schema(quant, member, worker) -> None:
    run = run_create(sandbox=quant, user=member, body="calculate_rsi --period 14\n",
                     language="bash")  # fmt: skip
    assert worker.future(run.pk).result(timeout=300) == RunStatus.FAILED
    run.refresh_from_db()
    assert "required property 'symbol' is missing" in run.result["stderr"]
    assert not [e for e in run_events_after(run) if e["type"] == "intermediate"]


def test_unpublished_script_tools_are_not_builtins(sandbox, member, base_image, worker) -> None:
    script_tool_save(sandbox=sandbox, tool=rsi_tool(), author=member)
    run = run_create(
        sandbox=sandbox, user=member, body="calculate_rsi --symbol A\n", language="bash"
    )
    assert worker.future(run.pk).result(timeout=300) == RunStatus.FAILED
    run.refresh_from_db()
    assert run.result["exit_code"] != 0
    assert "calculate_rsi" in run.result["stderr"]
