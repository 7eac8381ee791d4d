"""A brace expansion bashkit would cut short fails the run, naming it; one it expands runs.

bashkit 0.20.1 leaves a range of more than 10,000 words unexpanded (`for i in {1..20000}` ran
once, with `i` the literal text, which a tool was called with) and cuts a large product of
ranges and lists short (26^4 words came out 27,694), both without a word on stderr: the run
succeeded with wrong data, though the README promises a limit hit always fails it.
"""

from __future__ import annotations

import pytest

from jazzmine.bash import BashSession, ToolSpec
from jazzmine.core.tools import ToolResponse

ECHO = ToolSpec(
    name="echo_args",
    description="Echo the message.",
    schema={"type": "object", "properties": {"msg": {"type": "string"}}},
)


def session() -> BashSession:
    def echo_args(msg: str = "") -> ToolResponse:
        return ToolResponse(success=True, data={"msg": msg})

    return BashSession([ECHO], {"echo_args": echo_args})


@pytest.mark.parametrize(
    ("script", "named"),
    [
        (
            'for i in {1..20000}; do echo_args --msg "$i" > /dev/null; done\necho "last i=$i"\n',
            "{1..20000}",
        ),
        ('x=({a..z}{a..z}{a..z}{a..z}); echo "count=${#x[@]}"\n', "456,976 words"),
        ("echo {0..30000..2} | wc -w\n", "{0..30000..2}"),
    ],
)
def test_an_expansion_past_what_bashkit_expands_fails_the_run(script: str, named: str) -> None:
    result = session().run(script)
    assert result.exit_code != 0, result.stdout
    assert named in (result.error or ""), result.error


@pytest.mark.parametrize(
    ("script", "printed"),
    [
        ('x=({1..10000}); echo "${#x[@]}"\n', "10000"),
        ('x=({1..200}{1..200}); echo "${#x[@]}"\n', "40000"),
        ("echo {1..3}{a,b}\n", "1a 1b 2a 2b 3a 3b"),
    ],
)
def test_an_expansion_bashkit_makes_whole_runs(script: str, printed: str) -> None:
    result = session().run(script)
    assert result.exit_code == 0 and not result.error, result.error
    assert result.stdout.strip() == printed
