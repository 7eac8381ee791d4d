"""The harness run as a plain subprocess (no container): protocol, walls, error reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jazzmine.core.tools import ScriptGenerator, body_offset
from jazzmine.sandbox.harness import UNRESTRICTED_ENV
from jazzmine.sandbox.runtime import stage_runtime

from .sample_tools import TEST_SANDBOX, make_registry


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Path:
    registry = make_registry()
    return stage_runtime(tmp_path_factory.mktemp("runtime"), registry.tools(TEST_SANDBOX))


def run(runtime: Path, script: str, offset: int = 0, env: dict | None = None, **extra) -> list:
    request = {"script": script, "body_offset": offset, "allowed_tools": None, **extra}
    done = subprocess.run(
        [sys.executable, "-I", str(runtime / "harness.py"), str(runtime)],
        input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=30,
        env={"PATH": os.environ["PATH"], **(env or {})}, check=False,
    )  # fmt: skip
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["type"] == "ready", done.stderr
    assert lines[-1]["type"] == "exit", done.stdout + done.stderr
    return lines[1:]


def types_of(events: list) -> list[str]:
    return [e["type"] for e in events]


def test_it_streams_events_in_order_with_sequence_numbers(runtime):
    events = run(runtime, 'emit_intermediate("step", {"n": 1})\nemit_log("half")\nemit_result(2)\n')
    assert types_of(events) == ["intermediate", "log", "result", "exit"]
    assert [e["seq"] for e in events] == [1, 2, 3, 4]
    assert events[0]["data"] == {"label": "step", "data": {"n": 1}}
    assert events[2]["data"] == 2
    assert events[3]["data"]["outcome"] == "result"


def test_it_calls_sync_and_async_tools_as_plain_functions(runtime):
    events = run(runtime, "emit_result([add(2, 3).data, slow_double(4).data])\n")
    assert events[0]["data"] == [5, 8]


def test_a_tool_that_raises_becomes_a_failed_response(runtime):
    events = run(runtime, 'r = explode("kaput")\nemit_result([r.success, r.message])\n')
    assert events[0]["data"] == [False, "Tool 'explode' raised RuntimeError: kaput"]


def test_print_becomes_log_events_and_cannot_forge_events(runtime):
    forged = '{"seq": 99, "type": "result", "data": "forged", "ts": 1}'
    events = run(runtime, f"print({forged!r})\nemit_result(1)\n")
    assert types_of(events) == ["log", "result", "exit"]
    assert events[0]["data"]["message"] == forged
    assert events[1]["data"] == 1


def test_rebinding_json_dumps_does_not_break_the_channel(runtime):
    script = 'json.dumps = lambda *a, **k: "x"\ntime.time = lambda: 0\nemit_result({"ok": True})\n'
    events = run(runtime, script)
    assert events[0] == {**events[0], "type": "result", "data": {"ok": True}}
    assert events[0]["ts"] > 0


def test_line_numbers_refer_to_the_body_the_llm_wrote(runtime):
    registry = make_registry()
    body = 'x = {"a": 1}\n\ny = x["missing"]\nemit_result(y)'
    script = ScriptGenerator(registry).assemble_script(body, TEST_SANDBOX)
    events = run(runtime, script, offset=body_offset(script))
    error = events[0]["data"]
    assert error["exception"] == "KeyError"
    assert error["line"] == 3
    assert "line 3 of the script" in error["message"]
    assert 'y = x["missing"]' in error["traceback"]
    assert events[-1]["data"]["outcome"] == "script_error"


def test_a_syntax_error_reports_the_body_line(runtime):
    events = run(runtime, "# a\n# b\nx = 1\nif x\n", offset=2)
    assert events[0]["data"]["exception"] == "SyntaxError"
    assert events[0]["data"]["line"] == 2


def test_a_script_without_emit_result_ends_with_an_error_saying_so(runtime):
    events = run(runtime, "x = 1\n")
    assert types_of(events) == ["error", "exit"]
    assert "without calling emit_result" in events[0]["data"]["message"]


def test_non_json_data_gives_a_clear_error(runtime):
    events = run(runtime, 'emit_result({"x": float("nan")})\n')
    assert "JSON-safe" in events[0]["data"]["message"]
    events = run(runtime, "emit_intermediate('s', {1, 2})\n")
    assert "JSON-safe" in events[0]["data"]["message"]


def test_a_tool_response_can_be_emitted_as_is(runtime):
    events = run(runtime, "emit_result(add(1, 1))\n")
    assert events[0]["data"] == {"success": True, "message": None, "data": 2}


def test_imports_and_unsafe_builtins_are_refused(runtime):
    events = run(runtime, "import os\n")
    assert "imports are not allowed" in events[0]["data"]["message"]
    events = run(runtime, "open('/etc/passwd')\n")
    assert events[0]["data"]["exception"] == "NameError"


def test_getattr_refuses_dunder_and_frame_attributes(runtime):
    events = run(runtime, "getattr(emit_result, '__globals__')\n")
    assert "not available in the sandbox" in events[0]["data"]["message"]
    events = run(runtime, "emit_result(hasattr(add, '__code__'))\n")
    assert events[0]["data"] is False


def test_os_and_sys_are_not_preimported(runtime):
    events = run(runtime, "emit_result(sorted(k for k in ['os', 'sys', 'json', 'math']))\nos\n")
    assert events[-2]["data"]["exception"] == "NameError"


def test_secrets_reach_tools_through_the_environment(runtime):
    events = run(runtime, "emit_result(read_env('API_KEY').data)\n", secrets={"API_KEY": "k-1"})
    assert events[0]["data"] == "k-1"


def test_unrestricted_requests_need_the_runner_flag(runtime):
    events = run(runtime, "import os\nemit_result(1)\n", unrestricted=True)
    assert events[0]["data"]["message"].startswith("unrestricted mode refused")
    assert events[1]["data"]["exception"] == "ImportError"
    events = run(runtime, "import os\nemit_result(1)\n", unrestricted=True,
                 env={UNRESTRICTED_ENV: "1"})  # fmt: skip
    assert events[0]["data"] == 1


def test_a_second_emit_result_is_an_error(runtime):
    events = run(runtime, "emit_result(1)\nemit_result(2)\n")
    assert types_of(events) == ["result", "error", "exit"]
    assert "already called" in events[1]["data"]["message"]
