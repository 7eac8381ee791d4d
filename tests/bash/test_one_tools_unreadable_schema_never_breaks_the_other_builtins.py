"""One tool's schema that bashkit cannot read never takes every other builtin down with it.

bashkit refuses a schema nested deeper than 64 levels (tool.json's `parameters` as it is, or
a Python tool's default value), and nothing before it does: a member's script tool with such
a schema made every bash run of its sandbox fail, and the bash prompt of the sandbox raise.
"""

from __future__ import annotations

from typing import Any

import pytest

from jazzmine.bash import BashSession, ToolSpec, specs_for_sandbox, system_prompt
from jazzmine.bash.sandbox import run_bash_in_sandbox
from jazzmine.core.tools import SandboxConfig, ToolRegistry
from jazzmine.sandbox import SandboxBuilder
from jazzmine.scripttools import ScriptTool, register_script_tool

GET_USER = ToolSpec("get_user", "Fetch a user", {"type": "object", "properties": {}})


def deep_schema(levels: int = 80) -> dict[str, Any]:
    """Return an object schema whose one property nests `levels` objects deep."""
    nested: dict[str, Any] = {}
    for _ in range(levels):
        nested = {"type": "object", "properties": {"inner": nested}}
    return {"type": "object", "properties": {"filter": nested}}


DEEP = ToolSpec("deep_filter", "Filter deeply", deep_schema())


def test_the_other_builtins_still_run_next_to_a_tool_whose_schema_bash_cannot_read():
    ran: list[str] = []
    functions = {"get_user": lambda: "Ada", "deep_filter": lambda **_: ran.append("deep") or ""}
    result = BashSession([GET_USER, DEEP], functions).run("get_user; deep_filter || echo refused")
    assert result.stdout == "Ada\nrefused\n" and ran == []
    assert "deep_filter: tool 'deep_filter' cannot be called from bash" in result.stderr
    assert [(c.name, c.exit_status) for c in result.calls] == [("get_user", 0), ("deep_filter", 1)]


def test_the_prompt_of_a_sandbox_with_such_a_tool_is_still_written():
    assert "get_user" in system_prompt([GET_USER, DEEP])


SHOW = "import json, sys\nprint(json.dumps(json.load(sys.stdin)))\n"


@pytest.mark.docker
async def test_a_script_tool_with_a_schema_too_deep_for_bash_leaves_the_sandbox_runs_working(
    docker_client, base_image, tmp_path
):
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name="deep"))
    tools = [
        ScriptTool(
            name="show",
            description="Show the arguments",
            source=SHOW,
            parameters={
                "type": "object",
                "properties": {"name": {"type": "string"}},
            },
        ),
        ScriptTool(name="deep_filter", description="Filter", source=SHOW, parameters=deep_schema()),
    ]
    for tool in tools:
        register_script_tool(registry, tool, sandbox="deep")
    builder = SandboxBuilder(registry, client=docker_client, cache_dir=tmp_path)
    try:
        image = builder.ensure_image("deep").tag
        specs = specs_for_sandbox(registry, "deep", script_tools=tools)
        result = await run_bash_in_sandbox(
            "show --name Ada | jq -r .name\ndeep_filter || echo refused\n",
            sandbox_image=image, specs=specs, client=docker_client,
        )  # fmt: skip
        assert result.stdout == "Ada\nrefused\n", result
        assert [(c.name, c.exit_status) for c in result.calls] == [("show", 0), ("deep_filter", 1)]
    finally:
        builder.prune("deep", keep=0)  # this test's images, and the bash images on them
