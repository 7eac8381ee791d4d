"""Text piped into a tool given no flag fails the call, saying how to pass it: it was dropped.

A tool reads its --flags only. `echo '{"msg": "from stdin"}' | echo_args` called the tool
with nothing and the run went on as if that were what the script meant; bashkit's prompt
says "stdin pipelines are available", which holds between commands, not into a tool. A call
with flags inside `... | while read x` (which gets the rest of the loop's input) and a tool
that takes no parameter are as before.
"""

from __future__ import annotations

from jazzmine.bash import BashSession, ToolSpec
from jazzmine.bash.engine import TOOLS_READ_FLAGS
from jazzmine.core.tools import ToolResponse

ECHO = ToolSpec(
    name="echo_args",
    description="Echo the message.",
    schema={"type": "object", "properties": {"msg": {"type": "string"}}},
)
EVERYTHING = ToolSpec(
    name="list_all", description="List all.", schema={"type": "object", "properties": {}}
)


def session() -> BashSession:
    def echo_args(msg: str = "") -> ToolResponse:
        return ToolResponse(success=True, data={"msg": msg})

    def list_all() -> ToolResponse:
        return ToolResponse(success=True, data=[1])

    return BashSession([ECHO, EVERYTHING], {"echo_args": echo_args, "list_all": list_all})


def test_text_piped_into_a_tool_with_no_flag_fails_the_call_saying_how() -> None:
    result = session().run('echo \'{"msg": "from stdin"}\' | echo_args\n')
    assert result.exit_code != 0 and result.stdout == ""
    assert "echo_args reads only its --flags, not what is piped into it" in result.stderr
    assert [call.exit_status for call in result.calls] == [1]


def test_a_loop_reading_lines_still_calls_the_tool_with_each() -> None:
    script = 'printf "a\\nb\\nc\\n" | while read x; do echo_args --msg "$x"; done\n'
    result = session().run(script)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == ['{"msg": "a"}', '{"msg": "b"}', '{"msg": "c"}']
    looped = session().run('printf "a\\nb\\n" | while read x; do list_all; done\n')
    assert looped.exit_code == 0 and looped.stdout.splitlines() == ["[1]", "[1]"]
    assert session().run("true | echo_args\n").exit_code == 0  # nothing piped in


def test_the_prompt_says_what_a_tool_reads() -> None:
    assert session().system_prompt().endswith(TOOLS_READ_FLAGS)
