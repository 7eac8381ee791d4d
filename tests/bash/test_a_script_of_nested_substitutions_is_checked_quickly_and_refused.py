"""A bash script of nested command substitutions is checked in milliseconds, and refused.

The check reads each substitution on its own too, so nested ones were read again at every
level: a 5 KB script of `$(echo $(echo ...))` took 8.6 s of the checking process (the web
process's, for the editor, the playground and the agents' API), 16 KB a minute. Past its
bounds the reading stops, and a script it cannot read is refused: the engine could not see
where a limit hit would go unreported.
"""

from __future__ import annotations

import time

import pytest

from jazzmine.bash.generator import check_script

MAX_CHARS = 100_000


def nested(depth: int) -> str:
    return "echo " + "$(echo " * depth + "hi" + ")" * depth + "\n"


@pytest.mark.parametrize(
    "body",
    [nested(700), nested(2000), "".join(f"echo $(echo {i})\n" for i in range(1200))],
    ids=["5 KB nested", "16 KB nested", "1200 substitutions"],
)
def test_it_is_refused_at_once(body) -> None:
    started = time.monotonic()
    problems = check_script(body, max_chars=MAX_CHARS)
    assert time.monotonic() - started < 2.0
    assert len(problems) == 1 and "too many or nested too deep" in problems[0], problems


@pytest.mark.parametrize(
    "body",
    [
        nested(20),
        'y=${y:-$(a "$(b)")}\necho "$(get_orders --status new)"\n',
        "".join(f"echo $(echo {i})\n" for i in range(200)),
    ],
)
def test_ordinary_substitutions_are_still_read(body) -> None:
    assert check_script(body, max_chars=MAX_CHARS) == []


def test_a_substitution_that_hides_a_limit_hit_is_still_found_among_many() -> None:
    body = "".join(f"echo $(echo {i})\n" for i in range(100)) + "echo $(trap 'x' EXIT)\n"
    (problem,) = check_script(body, max_chars=MAX_CHARS)
    assert "EXIT trap" in problem
