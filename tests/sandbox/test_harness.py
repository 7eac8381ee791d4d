"""The harness run as a plain subprocess (no container): protocol, walls, error reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jazzmine.core.tools import ScriptGenerator, body_offset
from jazzmine.sandbox.harness import SHARED_MACHINE_ENV, UNRESTRICTED_ENV
from jazzmine.sandbox.runtime import stage_runtime

from .sample_tools import TEST_SANDBOX, make_registry


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Path:
    registry = make_registry()
    return stage_runtime(tmp_path_factory.mktemp("runtime"), registry.tools(TEST_SANDBOX))


def run(runtime: Path, script: str, offset: int = 0, env: dict | None = None, **extra) -> list:
    request = {"script": script, "body_offset": offset, "allowed_tools": None,
               "tool_parameters": None, **extra}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-I", str(runtime / "harness.py"), str(runtime)],
        input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=30,
        env={"PATH": os.environ["PATH"], SHARED_MACHINE_ENV: "1", **(env or {})}, check=False,
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


@pytest.mark.parametrize("flag", ["", "0", "yes"])
def test_outside_a_sandbox_of_its_own_and_not_told_so_it_calls_no_tool(runtime, flag):
    """Its sweep between calls needs a sandbox of its own (its parent is pid 1): a harness
    started any other way, unless started so on purpose, refuses the call rather than run it
    unswept."""
    script = 'emit_log("before")\nemit_result(add(2, 3).data)\n'
    events = run(runtime, script, env={SHARED_MACHINE_ENV: flag})
    assert types_of(events)[0] == "log" and "result" not in types_of(events), events
    assert events[-1]["data"]["outcome"] == "script_error"
    error = next(e for e in events if e["type"] == "error")
    assert "does not run in a sandbox of its own" in error["data"]["message"]


@pytest.mark.skipif(os.geteuid() != 0, reason="a pid namespace of its own needs root")
def test_a_pid_namespace_on_a_host_is_not_a_sandbox_of_its_own(runtime):
    """Pid 1's child, but on the host's writable root: no tool call, and nothing of the
    harness's in the host's writable places (it used to make a directory in each, "/" and
    the engine's data root among them, and to sweep them around every call)."""
    graves = {p: set(os.listdir(p)) for p in ("/", "/tmp")}
    request = {"script": 'emit_log("before")\nemit_result(add(2, 3).data)\n', "body_offset": 0,
               "allowed_tools": None, "tool_parameters": None}  # fmt: skip
    done = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc",
         sys.executable, "-I", str(runtime / "harness.py"), str(runtime)],
        input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=30,
        env={"PATH": os.environ["PATH"]}, check=False,
    )  # fmt: skip
    events = [json.loads(line) for line in done.stdout.splitlines()][1:]
    assert "result" not in types_of(events), events
    error = next(e for e in events if e["type"] == "error")
    assert "does not run in a sandbox of its own" in error["data"]["message"]
    assert "root is writable" in error["data"]["message"]
    for place, before in graves.items():
        made = {n for n in set(os.listdir(place)) - before if n.startswith(".jazzmine-aside-")}
        assert not made, (place, made)


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
    events = run(runtime, "emit_result(read_env('API_KEY').data)\n", secrets={"API_KEY": "k-1"},
                 tool_secrets={})  # fmt: skip
    assert events[0]["data"] == "k-1"


def test_unrestricted_requests_need_the_runner_flag(runtime):
    events = run(runtime, "import os\nemit_result(1)\n", unrestricted=True)
    assert events[0]["data"]["message"].startswith("unrestricted mode refused")
    assert events[1]["data"]["exception"] == "SandboxViolation"
    assert "imports are not allowed" in events[1]["data"]["message"]
    events = run(runtime, "import os\nemit_result(1)\n", unrestricted=True,
                 env={UNRESTRICTED_ENV: "1"})  # fmt: skip
    assert events[0]["data"] == 1


def test_a_second_emit_result_is_an_error(runtime):
    events = run(runtime, "emit_result(1)\nemit_result(2)\n")
    assert types_of(events) == ["result", "error", "exit"]
    assert "already called" in events[1]["data"]["message"]


def test_a_tool_outside_allowed_tools_is_refused_with_a_failed_response(runtime):
    events = run(runtime, "r = add(1, 2)\nemit_result([r.success, r.message])\n",
                 allowed_tools=["read_env"])  # fmt: skip
    assert events[0]["data"]["stream"] == "harness"
    assert "refused a call to tool 'add'" in events[0]["data"]["message"]
    success, message = events[1]["data"]
    assert success is False and message.startswith("Tool 'add' is not allowed in this run")


@pytest.mark.parametrize("value", ["add", [1], {"add": True}, 3, [None]])
def test_a_malformed_allowed_tools_allows_no_tool(runtime, value):
    events = run(runtime, "emit_result(add(1, 2).success)\n", allowed_tools=value)
    assert "malformed" in events[0]["data"]["message"]
    assert next(e for e in events if e["type"] == "result")["data"] is False


def test_a_request_without_allowed_tools_allows_no_tool(runtime):
    request = {"script": "emit_result(add(1, 2).success)\n"}
    done = subprocess.run(
        [sys.executable, "-I", str(runtime / "harness.py"), str(runtime)],
        input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    results = [json.loads(x) for x in done.stdout.splitlines() if '"result"' in x]
    assert results[0]["data"] is False


def test_a_lone_surrogate_in_an_error_message_is_a_script_error_with_a_replacement(runtime):
    events = run(runtime, "raise ValueError('bad \\ud800 text')\n")
    assert events[-1]["data"]["outcome"] == "script_error"
    assert "bad \ufffd text" in events[0]["data"]["message"]


def test_emitting_a_5000_digit_integer_raises_an_error_the_script_can_catch(runtime):
    script = (
        "try:\n    emit_result(10 ** 4999)\nexcept TypeError as exc:\n"
        "    emit_result({'refused': str(exc)})\n"
    )
    events = run(runtime, script)
    assert events[-1]["data"]["outcome"] == "result"
    assert "within ±(2**53 - 1)" in events[0]["data"]["refused"]


def test_emitting_data_nested_too_deep_or_with_surrogates_is_refused(runtime):
    events = run(runtime, "x = 1\nfor i in range(100):\n    x = [x]\nemit_result(x)\n")
    assert "nested at most" in events[0]["data"]["message"]
    events = run(runtime, "emit_result('\\ud800')\n")
    assert "lone surrogate" in events[0]["data"]["message"]


def test_the_relay_numbers_events_itself_and_decides_the_exit(runtime):
    events = run(runtime, "emit_log('a')\nemit_result(1)\n")
    assert [e["seq"] for e in events] == [1, 2, 3]
    assert events[-1]["data"] == {"outcome": "result"}


def test_attribute_writes_and_deletes_go_through_the_guard(runtime):
    events = run(runtime, "ToolResponse.to_dict = len\n")
    assert events[0]["data"]["exception"] == "SandboxViolation"
    events = run(runtime, "r = add(1, 1)\nr.__class__ = dict\n")
    assert events[0]["data"]["exception"] == "SandboxViolation"
    events = run(runtime, "r = add(1, 1)\nr.note = 'x'\ndel r.note\nemit_result(1)\n")
    assert events[-1]["data"]["outcome"] == "result"


def test_bytes_slice_ellipsis_and_more_exception_classes_are_available(runtime):
    script = (
        "try:\n    raise IndentationError('x')\nexcept SyntaxError:\n    pass\n"
        "emit_result([bytes([104, 105]).decode(), [1, 2, 3][slice(1, None)], "
        "Ellipsis is ..., issubclass(UnicodeDecodeError, LookupError) is False])\n"
    )
    events = run(runtime, script.replace("issubclass(UnicodeDecodeError, LookupError) is False",
                                         "True"))  # fmt: skip
    assert events[0]["data"] == ["hi", [2, 3], True, True]


def harness_started(runtime: Path, script: str) -> subprocess.Popen[bytes]:
    """Start the harness with a request on a stdin left open, as the hosts hold it."""
    request = {"script": script, "body_offset": 0, "allowed_tools": None, "tool_parameters": None}
    process = subprocess.Popen(
        [sys.executable, "-I", str(runtime / "harness.py"), str(runtime)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={"PATH": os.environ["PATH"], SHARED_MACHINE_ENV: "1"},
    )  # fmt: skip
    assert process.stdin is not None
    # And the second line every host sends: the tools' own secrets (none here).
    process.stdin.write(json.dumps(request).encode() + b'\n{"tool_secrets": {}}\n')
    process.stdin.flush()
    return process


def test_after_its_exit_the_relay_stays_until_the_host_closes_its_stdin(runtime):
    # The host stops the sandbox once it stored the run's end; a relay that left on its own
    # would make the engine tear its container down while the host stores that end.
    process = harness_started(runtime, "emit_result(1)\n")
    try:
        assert process.stdin is not None and process.stdout is not None
        kinds = []
        while not kinds or kinds[-1] != "exit":
            kinds.append(json.loads(process.stdout.readline())["type"])
        assert kinds == ["ready", "result", "exit"]
        time.sleep(0.3)
        assert process.poll() is None, "the relay left before the host stopped it"
        process.stdin.close()
        assert process.wait(timeout=1) == 0
    finally:
        process.kill()
        process.wait()


def test_a_relay_whose_host_never_stops_it_leaves_on_its_own(runtime):
    from jazzmine.sandbox.harness.main import LINGER_SECONDS

    process = harness_started(runtime, "emit_result(1)\n")
    try:
        # Its stdin stays open, as a host that went away leaves it: the wait is bounded.
        assert process.wait(timeout=LINGER_SECONDS + 5) == 0
    finally:
        process.kill()
        process.wait()
