"""A script prints, formats and reprs what a tool returns, as LLM-written scripts do.

A ToolResponse is a dataclass, whose repr guards against recursion with `id()`; the harness's
audit hook refused the `builtins.id` event that raises from the script's frame, so
`print(response)` failed the whole run with a SandboxViolation. The script itself still has
no `id`, and the events that matter (imports, spawning, files) stay refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jazzmine.core.tools import validate_script
from jazzmine.sandbox.runtime import stage_runtime

from .helpers import harness_events
from .sample_tools import TEST_SANDBOX, make_registry


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return stage_runtime(tmp_path_factory.mktemp("runtime"), make_registry().tools(TEST_SANDBOX))


def run(runtime: Path, script: str) -> list[dict]:
    assert validate_script(script, make_registry().tool_names(TEST_SANDBOX)) == []
    request = {"script": script, "body_offset": 0, "allowed_tools": None, "tool_parameters": None}
    return harness_events(runtime, json.dumps(request).encode() + b"\n")


@pytest.mark.parametrize(
    "shown",
    ["print(r)", "print([r, {'r': r}])", "emit_log(f'{r}')", "emit_log(str(r))",
     "emit_log(repr(r))", "emit_log(format(r))", "emit_log('%s' % (r,))"],
)  # fmt: skip
def test_a_script_shows_a_tool_response_and_goes_on_to_its_result(runtime, shown):
    events = run(runtime, f"r = add(2, 3)\n{shown}\nemit_result(r.data)\n")
    assert [e["type"] for e in events] == ["log", "result", "exit"], events
    assert "ToolResponse(success=True, message=None, data=5)" in events[0]["data"]["message"]
    assert events[1]["data"] == 5


def test_it_shows_the_same_twice_in_one_run(runtime):
    events = run(runtime, "r = add(1, 1)\nprint(r)\nprint(r)\nemit_result(1)\n")
    logs = [e["data"]["message"] for e in events if e["type"] == "log"]
    assert len(logs) == 2 and logs[0] == logs[1]


@pytest.mark.parametrize(
    "act",
    ["__import__('os')", "open('/etc/passwd')", "id(1)"],
)
def test_what_the_script_does_itself_is_still_refused(runtime, act):
    script = f"r = add(1, 1)\nprint(r)\n{act}\nemit_result(1)\n"
    request = {"script": script, "body_offset": 0, "allowed_tools": None, "tool_parameters": None}
    events = harness_events(runtime, json.dumps(request).encode() + b"\n")
    assert [e["type"] for e in events] == ["log", "error", "exit"], events
    assert events[-1]["data"]["outcome"] == "script_error"
