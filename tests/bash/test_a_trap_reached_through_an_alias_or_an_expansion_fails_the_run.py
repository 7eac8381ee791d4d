"""A trap or eval reached through an alias or an expanded word fails the run like a plain one.

bashkit's parser reports a word as written (quotes removed) when it holds braces or a tilde,
and bashkit expands them when the command runs: `~` after `HOME=trap` is the command `trap`,
`builtin {trap,'handler',EXIT}` is three words, `eval a=~` runs what $HOME holds, and
`declare -a a=~` and `compgen -W ~` read that value again as code. With `shopt -s
expand_aliases`, `alias t=trap` makes `t` set traps the reading never saw. Each of these set an
EXIT trap that the check and the run's verdict missed, and a handler cut off by a limit ended
the run with exit 0 and no error. So did a script bash cannot parse, whose first lines bashkit
runs anyway, when the trap in them was spelled `$'\\x74rap'`.
"""

from __future__ import annotations

import pytest

from jazzmine.bash.generator import check_script
from tests.bash.limits import CALLS, LOOP, assert_stopped_by_a_limit, limited_session

ALIASES = "shopt -s expand_aliases\n"
# `$(` spelled apart, so that no substitution is in the script's text.
SUBSTITUTED = f"d='$'\nHOME=\"($d(trap '{LOOP}' EXIT))\"\n"

SCRIPTS = {
    "trap named by a tilde": f"HOME=trap\n~ '{LOOP}' EXIT\necho hi\n",
    "builtin running braced words": f"builtin {{trap,'{LOOP}',EXIT}}\necho hi\n",
    "command running braced words": f"command {{trap,'{LOOP}'}} EXIT\necho hi\n",
    "builtin running a tilde": f"HOME=trap\nbuiltin ~ '{LOOP}' EXIT\necho hi\n",
    "eval of braced words": f"eval {{trap,\"'{LOOP}'\",EXIT}}\necho hi\n",
    "eval of a tilde": f"HOME=trap\neval ~ \\''{LOOP}'\\' EXIT\necho hi\n",
    "eval of a tilde after =": f"HOME=\":; trap '{LOOP}' EXIT\"\neval a=~\necho hi\n",
    "an alias of trap": f"{ALIASES}alias t=trap\nt '{LOOP}' EXIT\necho hi\n",
    "an alias of trap, calling tools": f"{ALIASES}alias t=trap\nt '{CALLS}' EXIT\necho hi\n",
    "an alias of eval": f"{ALIASES}alias e=eval\ne \"trap '{LOOP}' EXIT\"\necho hi\n",
    "an alias holding the handler": f"{ALIASES}alias q=\"trap '{LOOP}' \"\nq EXIT\necho hi\n",
    "an alias ending in a blank": (
        f"{ALIASES}alias c='command '\nalias t=trap\nc t '{LOOP}' EXIT\necho hi\n"
    ),
    "declare -a reading a tilde": f"{SUBSTITUTED}declare -a a=~\necho hi\n",
    "local -a reading a tilde": f"{SUBSTITUTED}f() {{ local -a a=~; }}\nf\necho hi\n",
    "compgen -W reading a tilde": f"{SUBSTITUTED}compgen -W ~ >/dev/null\necho hi\n",
    "a script bash cannot parse": f"$'\\x74rap' '{CALLS}' EXIT\nif then fi\n",
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_the_check_refuses_it(name: str) -> None:
    problems = check_script(SCRIPTS[name])
    assert len(problems) == 1 and "would go unreported" in problems[0], problems


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_its_run_fails_as_stopped_by_a_limit(name: str) -> None:
    assert_stopped_by_a_limit(limited_session().run(SCRIPTS[name]))


def test_the_tools_an_aliased_trap_called_before_the_limit_are_traced() -> None:
    result = limited_session().run(SCRIPTS["an alias of trap, calling tools"])
    assert result.stdout == "hi\n" and len(result.calls) == 50
    assert_stopped_by_a_limit(result)


# What scripts do with these words that runs nothing built at run time.
ORDINARY = [
    f"{ALIASES}alias ll='ls -l'\nalias user='get_user --id'\nuser 1 | jq .id\n",
    "printf '1\\n2\\n' | xargs -I{} get_user --id {} | jq -s length\n",
    "for i in {1..3}; do get_user --id $i >/dev/null; done\necho ~ ~/a\n",
    "declare -a ids=(1 2 3)\necho ${ids[@]}\neval 'get_user --id 1' | jq .id\n",
    '[ -n "$HOME" ] && echo home\n',
]


@pytest.mark.parametrize("body", ORDINARY)
def test_ordinary_scripts_still_pass_and_run(body: str) -> None:
    assert check_script(body) == []
    result = limited_session().run(body)
    assert (result.exit_code, result.error) == (0, None), result
