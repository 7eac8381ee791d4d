"""bashkit's refusal of an argument that is not a --flag names the line and the tool.

`get_user user_id=3` failed the run with "expected --flag, got: user_id=3", naming neither
the tool nor the line: in a script of many calls, the LLM reading the retry prompt (or the
person reading the run) had to guess, and two refusals ran together on one line
("got: -uexpected --flag, got: 4"). Each now says its line, its tool and how a tool takes
its arguments.
"""

from __future__ import annotations

from jazzmine.bash import BashSession, ToolSpec
from jazzmine.bash.engine import FLAG_HINT
from jazzmine.core.tools import ToolResponse

GET = ToolSpec(
    name="get_user",
    description="Get a user.",
    schema={"type": "object", "properties": {"user_id": {"type": "integer"}}},
)
ORDERS = ToolSpec(
    name="get_orders",
    description="Get orders.",
    schema={"type": "object", "properties": {"status": {"type": "string"}}},
)


def session() -> BashSession:
    def get_user(user_id: int = 0) -> ToolResponse:
        return ToolResponse(success=True, data={"id": user_id})

    def get_orders(status: str = "") -> ToolResponse:
        return ToolResponse(success=True, data=[status])

    return BashSession([GET, ORDERS], {"get_user": get_user, "get_orders": get_orders})


def test_the_refusal_names_the_line_and_the_tool() -> None:
    script = 'echo "get_user user_id=3"\nget_orders --status open\nget_user user_id=3\n'
    for _ in range(2):
        result = session().run(script)
        assert result.exit_code != 0
        assert f"line 3: get_user: expected --flag, got: user_id=3 ({FLAG_HINT})" in result.stderr


def test_two_refusals_each_get_their_own_line() -> None:
    script = "if true; then\n  get_orders -s open\nfi\nx=$(get_user 4)\n"
    lines = session().run(script).stderr.splitlines()
    assert f"line 2: get_orders: expected --flag, got: -s ({FLAG_HINT})" in lines
    assert f"line 4: get_user: expected --flag, got: 4 ({FLAG_HINT})" in lines


def test_flags_in_either_spelling_still_pass() -> None:
    result = session().run("get_user --user_id=3\nget_user --user_id 4\n")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == ['{"id": 3}', '{"id": 4}']
