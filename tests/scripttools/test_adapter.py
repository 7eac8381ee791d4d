"""Script tools as Python tool functions: same catalog, called from jazzmine scripts."""

from __future__ import annotations

from dataclasses import replace

import pytest

from jazzmine.core.tools import ToolRegistry, ToolResponse
from jazzmine.sandbox import RunLimits, RunRequest, SandboxBuilder
from jazzmine.sandbox.docker_runner import DockerRunner
from jazzmine.scripttools import function_source, load_tool_dir, register_script_tool

from .samples import RSI


def compiled(tool):
    namespace = {"ToolResponse": ToolResponse}
    exec(function_source(tool), namespace)
    return namespace[tool.name]


def test_the_function_returns_the_scripts_json_as_data():
    response = compiled(load_tool_dir(RSI))(symbol="AAPL", period=20)
    assert response.success and response.data["period"] == 20


def test_positional_arguments_follow_required_parameters_first():
    assert compiled(load_tool_dir(RSI))("MSFT").data["symbol"] == "MSFT"


def test_a_non_zero_exit_becomes_a_script_error():
    response = compiled(load_tool_dir(RSI))()
    assert not response.success
    assert response.message == "script error: missing required parameter: symbol"


def test_text_output_is_kept_as_text():
    tool = replace(load_tool_dir(RSI), source="print('fifty')\n")
    response = compiled(tool)()
    assert response.success and response.data == "fifty"


def test_a_stuck_script_is_stopped_at_its_timeout():
    tool = replace(load_tool_dir(RSI), source="import time\ntime.sleep(30)\n", timeout=0.5)
    response = compiled(tool)()
    assert not response.success and "timed out after 0.5 s" in response.message


def test_registering_keeps_the_name_schema_and_secrets():
    registry = ToolRegistry()
    tool = replace(load_tool_dir(RSI), secrets=["POLYGON_API_KEY"])
    registered = register_script_tool(registry, tool)
    assert registered.name == "calculate_rsi" and registered.fn is None
    assert [p.name for p in registered.tool.parameters] == ["symbol", "period", "signal"]
    assert registry.aggregate_secrets("default") == ["POLYGON_API_KEY"]
    assert "POLYGON_API_KEY" in registered.source  # passed through to the script's env


@pytest.mark.docker
async def test_a_python_script_in_the_sandbox_calls_a_script_tool(
    docker_client, base_image, tmp_path
):
    registry = ToolRegistry()
    register_script_tool(registry, load_tool_dir(RSI))
    image = SandboxBuilder(registry, client=docker_client, cache_dir=tmp_path).ensure_image(
        "default"
    )
    script = (
        "first = calculate_rsi(symbol='AAPL')\n"
        "broken = calculate_rsi()\n"
        "emit_result({'rsi': first.data['rsi'], 'ok': first.success, 'error': broken.message})\n"
    )
    runner = DockerRunner(docker_client).bind(image.tag, RunLimits(timeout_seconds=30))
    events = [e async for e in runner.run(RunRequest(script=script))]
    result = next(e for e in events if e.type == "result")
    assert result.data["ok"] is True and isinstance(result.data["rsi"], float)
    assert result.data["error"] == "script error: missing required parameter: symbol"


LEAVES_A_DAEMON = """\
import json, os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(30)  # holds the stdout and stderr it was born with
        os._exit(0)
    os._exit(0)
sys.stderr.write("left a child\\n")
print(json.dumps({"ok": True}))
"""


def test_a_script_that_leaves_a_child_running_answers_when_it_ends():
    # Its output was read from pipes to their end, which the child held open: the call
    # waited out the tool's whole timeout and said it timed out.
    import time

    tool = replace(load_tool_dir(RSI), source=LEAVES_A_DAEMON, timeout=10)
    started = time.monotonic()
    response = compiled(tool)()
    assert time.monotonic() - started < 5
    assert response.success and response.data == {"ok": True}, response.message


def test_a_script_past_its_timeout_is_stopped_with_what_it_left():
    import time

    tool = replace(load_tool_dir(RSI), source="import time\ntime.sleep(30)\n", timeout=0.5)
    started = time.monotonic()
    response = compiled(tool)()
    assert time.monotonic() - started < 5
    assert response.message == "script error: timed out after 0.5 s"


def test_a_scripts_error_is_told_from_the_script_as_python3_tells_it():
    tool = replace(load_tool_dir(RSI), source="x = 1\nprint(1 / (x - 1))\n")
    response = compiled(tool)()
    assert not response.success
    lines = response.message.splitlines()
    start = next(n for n, line in enumerate(lines) if "Traceback (most recent call last):" in line)
    # The script's own frame comes first: no frame of the starter or of runpy above it.
    assert lines[start + 1].endswith(", line 2, in <module>"), lines
    assert "runpy" not in response.message and '"<string>"' not in response.message
    assert lines[-1] == "ZeroDivisionError: division by zero"
