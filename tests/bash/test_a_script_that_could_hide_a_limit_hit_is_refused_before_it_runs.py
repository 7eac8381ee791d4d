"""A bash script that could hide a limit hit from its run is refused when it is checked.

The engine fails such a run at its end (`jazzmine.bash.blindspots`), after every tool call of
it was made: the editor, the API and the review queue say so first, on the line it is, so an
LLM's retry or a person fixes the script instead of a reviewer approving what cannot succeed.
"""

from __future__ import annotations

import pytest

from jazzmine.bash.generator import check_script

REFUSED = {
    "EXIT trap": ("echo start\ntrap 'get_orders' EXIT\necho end\n", 2, "EXIT trap"),
    "job with stderr sent away": (
        "echo a\n{ get_orders & } 2>/dev/null\nwait\n",
        2,
        "background job",
    ),
    "job in a function sent away": ("f() { get_orders & }\nf 2>/dev/null\n", 2, "background job"),
    "eval of a built string": ('echo a\neval "$CMD"\n', 2, "eval"),
    "computed command name": ("x=get_orders\n$x --status new\n", 2, "computed at run time"),
    "quoted computed name": ('echo hi\nx=ls\n"$cmd" foo\n', 3, "computed at run time"),
    "braced computed name": ("a=1\n${f} x\n", 2, "computed at run time"),
    "substituted name": ("echo a\necho b\n$(echo ls) x\n", 3, "computed at run time"),
    "name after a semicolon": ("echo a\necho b; $x y\n", 2, "computed at run time"),
    "name after then": ("echo a\nif true; then\n  $x y\nfi\n", 3, "computed at run time"),
    "source": ("echo a\n\necho $((1+2))\nsource x.sh\n", 4, "`source`"),
    "compgen over built words": ('echo\ncompgen -W "$(seq 1 9)" 2>&1\n', 2, "compgen"),
}


@pytest.mark.parametrize("case", REFUSED.values(), ids=REFUSED.keys())
def test_it_is_refused_on_its_line_saying_why(case) -> None:
    body, line, said = case
    problems = check_script(body)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"Line {line}: ") and said in problems[0], problems
    assert "would go unreported" in problems[0]


@pytest.mark.parametrize(
    "body",
    [
        "get_orders --status delivered | jq '[.orders[].price] | add'\n",
        "get_orders >/tmp/a &\nget_user --user_id U-1 >/tmp/b &\nwait\ncat /tmp/a /tmp/b\n",
        "get_orders 2>/dev/null &\nwait\n",  # the job's own redirection: its line stays out
        "echo 'a & b' # not a job &\n",
        "trap 'echo failed' ERR\nget_orders\n",
        'eval "echo hi"\n',  # a literal: read like the rest
    ],
)
def test_ordinary_scripts_pass(body) -> None:
    assert check_script(body) == []


def test_it_is_refused_the_same_twice() -> None:
    body = REFUSED["EXIT trap"][0]
    assert check_script(body) == check_script(body)
