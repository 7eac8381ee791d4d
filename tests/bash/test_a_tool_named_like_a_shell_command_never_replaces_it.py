"""A tool named like one of the shell's own commands (`exit`, `set`, `test`...) never replaces it.

bashkit lets a registered tool take the place of a builtin of the same name. A member's tool
named `exit` or `set` would then change what every other script of the sandbox means: a
reviewed `check || exit 1` no longer stops before the call it guards (`exit 1` becomes a tool
call that fails to parse), and `set -e` no longer turns strict mode on.
"""

from __future__ import annotations

import pytest

from jazzmine.bash import BashSession, ToolSpec, specs_for_sandbox, system_prompt
from jazzmine.bash.sandbox import run_bash_in_sandbox
from jazzmine.core.tools import SandboxConfig, ToolRegistry, ToolResponse
from jazzmine.sandbox import SandboxBuilder
from jazzmine.scripttools import ScriptTool, register_script_tool

NO_FLAGS = {"type": "object", "properties": {}}
GUARDED = 'check_ok || { echo "check failed, stopping"; exit 1; }\ndelete_all\n'
STRICT = "set -e\ncheck_ok\ndelete_all\n"


def check_ok() -> ToolResponse:
    return ToolResponse(success=False, message="not ok")


def session(
    deleted: list[str],
    *names: str,
    allowed: frozenset[str] | None = frozenset({"check_ok", "delete_all"}),
) -> BashSession:
    shadows = {name: (lambda name=name: f"{name} ran") for name in names}
    functions = {"check_ok": check_ok, "delete_all": lambda: deleted.append("all") or "gone"}
    functions.update(shadows)
    specs = [ToolSpec(name, f"A tool named {name}", NO_FLAGS) for name in [*names, *functions]]
    return BashSession(specs, functions, allowed_tools=allowed)


@pytest.mark.parametrize("script", [GUARDED, STRICT], ids=["exit", "set -e"])
def test_a_tool_named_exit_or_set_does_not_let_a_reviewed_script_run_past_its_guard(script):
    deleted: list[str] = []
    result = session(deleted, "exit", "set").run(script)
    assert deleted == [] and result.exit_code == 1, result
    assert [c.name for c in result.calls] == ["check_ok"]


def test_the_shell_commands_keep_their_meaning_next_to_such_tools():
    result = session([], "echo", "sort", "true", "test", "jq", allowed=None).run(
        'printf "b\\na\\n" | sort | head -1; echo \'{"x":2}\' | jq .x; test 1 = 1 && true && echo ok\n'
    )
    assert (result.stdout, result.calls) == ("a\n2\nok\n", [])


def test_a_tool_named_like_a_shell_command_is_not_offered_as_a_builtin():
    specs = [ToolSpec("exit", "Leave", NO_FLAGS), ToolSpec("get_user", "Fetch", NO_FLAGS)]
    prompt = system_prompt(specs)
    assert "get_user" in prompt and "Leave" not in prompt
    listed = BashSession(specs, {}).run("help --list | cut -d' ' -f1").stdout.split()
    assert listed == ["get_user"]


def test_tools_with_other_names_are_still_builtins():
    result = session([], "cat", "ls", "date", allowed=None).run("cat; ls; date")
    assert result.stdout == "cat ran\nls ran\ndate ran\n"


CHECK_OK = """
def check_ok() -> ToolResponse:
    return ToolResponse(success=False, message="not ok")
"""
DELETE_ALL = """
def delete_all() -> ToolResponse:
    return ToolResponse(success=True, data="everything was deleted")
"""
MEMBERS_EXIT = 'import json\nprint(json.dumps("a member\'s exit ran"))\n'
# A guard through `test`: Python's name rules refuse a tool named `exit` or `set` (builtins
# of every Python script), but `test`, `true`, `sort`... are names a tool may take.
TESTED = 'check_ok; ok=$?\nif test "$ok" -ne 0; then echo "check failed, stopping"; exit 1; fi\ndelete_all\n'


@pytest.mark.docker
async def test_a_member_script_tool_named_test_does_not_unguard_a_reviewed_run_in_the_sandbox(
    docker_client, base_image, tmp_path
):
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name="shadows"))
    registry.register_source(CHECK_OK, sandbox="shadows", description="Check first")
    registry.register_source(DELETE_ALL, sandbox="shadows", description="Delete everything")
    tools = [
        ScriptTool(name=name, description=f"A member's {name}", source=MEMBERS_EXIT)
        for name in ("test", "true")
    ]
    for tool in tools:
        register_script_tool(registry, tool, sandbox="shadows")
    builder = SandboxBuilder(registry, client=docker_client, cache_dir=tmp_path)
    try:
        image = builder.ensure_image("shadows").tag
        specs = specs_for_sandbox(registry, "shadows", script_tools=tools)
        for script in (TESTED, TESTED):  # twice: the second run means what the first did
            result = await run_bash_in_sandbox(
                script, sandbox_image=image, specs=specs, client=docker_client,
                allowed_tools=frozenset({"check_ok", "delete_all"}),
            )  # fmt: skip
            assert "everything was deleted" not in result.stdout, result
            assert result.exit_code == 1 and [c.name for c in result.calls] == ["check_ok"]
    finally:
        builder.prune("shadows", keep=0)  # this test's images, and the bash images on them
