"""An EXIT trap fails the run however its signal is spelled, as bashkit reads the spelling.

bashkit takes `00`, `000`... for signal 0 as it takes `0`, and it expands the words of `trap`
before it reads them: braces (`{EXIT,INT}`, `E{X,}IT`, even `{'handler',EXIT}`, one word that
becomes the handler and the signal), a tilde (`~` is $HOME, `~-` $OLDPWD, `~+` $PWD, which the
script sets) and globs. The engine matched the words as written against `EXIT` and `0`, so
these got past the check and the run's verdict alike: a handler cut off by a limit ended the
run with exit 0 and no error. A signal word now counts as EXIT unless it is certainly another
signal, so a spelling nobody thought of is refused too, wherever the trap is set (eval, a
function, a subshell, another trap's handler).
"""

from __future__ import annotations

import pytest

from jazzmine.bash.generator import check_script
from tests.bash.limits import (
    CALLS,
    LOOP,
    assert_stopped_by_a_limit,
    limited_session,
    run_in_a_bash_sandbox,
)

SPELLINGS = {
    "signal 00": f"trap '{LOOP}' 00\necho hi\n",
    "signal 000": f"trap '{LOOP}' 000\necho hi\n",
    "signal 0000": f"trap '{LOOP}' 0000\necho hi\n",
    "00 continued over two lines": f"trap '{LOOP}' 0\\\n0\necho hi\n",
    "brace expansion": f"trap '{LOOP}' {{EXIT,INT}}\necho hi\n",
    "brace expansion, calling tools": f"trap '{CALLS}' {{EXIT,}}\necho hi\n",
    "brace expansion inside the word": f"trap '{LOOP}' E{{X,}}IT\necho hi\n",
    "one word braced into handler and signal": f"trap {{'{LOOP}',EXIT}}\necho hi\n",
    "a tilde holding EXIT": f"HOME=EXIT\ntrap '{LOOP}' ~\necho hi\n",
    "~- holding EXIT": f"OLDPWD=EXIT\ntrap '{LOOP}' ~-\necho hi\n",
    "~+ holding EXIT": f"PWD=EXIT\ntrap '{LOOP}' ~+\necho hi\n",
    # No file can be made for the glob to match today; the check does not count on it.
    "a glob that may match a file named EXIT": f"trap '{LOOP}' EXI?\necho hi\n",
    "a handler held by a tilde": f"HOME=\"trap '{LOOP}' EXIT\"\ntrap ~ ERR\nfalse\necho hi\n",
    "00 after --": f"trap -- '{LOOP}' 00\necho hi\n",
    "00 through eval": f"eval \"trap '{LOOP}' 00\"\necho hi\n",
    "00 in a function": f"f() {{ trap '{LOOP}' 00; }}\nf\necho hi\n",
    "00 in a subshell": f"( trap '{LOOP}' 00; echo in )\necho hi\n",
    "00 set by an ERR trap's handler": f"trap \"trap '{LOOP}' 00\" ERR\nfalse\necho hi\n",
    "00 after && in a chain": f"true && trap '{LOOP}' 00 || true\necho hi\n",
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_the_check_refuses_it(name: str) -> None:
    problems = check_script(SPELLINGS[name])
    assert len(problems) == 1 and "would go unreported" in problems[0], problems


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_its_run_fails_as_stopped_by_a_limit(name: str) -> None:
    assert_stopped_by_a_limit(limited_session().run(SPELLINGS[name]))


def test_the_tools_its_handler_called_before_the_limit_are_traced() -> None:
    result = limited_session().run(SPELLINGS["brace expansion, calling tools"])
    assert result.stdout == "hi\n" and len(result.calls) == 50
    assert_stopped_by_a_limit(result)


# Traps bashkit never runs at the end: other signals in the spellings it reads, an ERR trap
# (a limit hit in one fails the run), resets, and the ones that only print.
OTHER_SIGNALS = [
    "trap 'echo failed >&2' ERR\nget_user --id 1 >/dev/null\n",
    "trap 'echo \"failed on line $LINENO\" >&2' ERR\nget_user --id 1 >/dev/null\n",
    "trap 'echo \"[ERROR] failed\" >&2' ERR\nget_user --id 1 >/dev/null\n",
    "trap 'echo stop' INT TERM HUP\necho hi\n",
    "trap 'echo stop' sigint SigTerm 2 02 15 DEBUG\necho hi\n",
    "trap - EXIT\ntrap '' EXIT\ntrap EXIT\necho hi\n",
    "trap -p\ntrap -l >/dev/null\ntrap -p EXIT\necho hi\n",
]


@pytest.mark.parametrize("body", OTHER_SIGNALS)
def test_a_trap_on_another_signal_still_passes_and_runs(body: str) -> None:
    assert check_script(body) == []
    result = limited_session().run(body)
    assert (result.exit_code, result.error) == (0, None), result


@pytest.mark.docker
async def test_the_sandbox_run_fails_the_same_way(docker_client, base_image, tmp_path) -> None:
    """The bash image runs its own copy of the reading: it must be this one."""
    result = await run_in_a_bash_sandbox(
        SPELLINGS["brace expansion, calling tools"],
        sandbox="exit-trap-spellings-bash", docker_client=docker_client, cache_dir=tmp_path,
    )  # fmt: skip
    assert result.stdout == "hi\n" and len(result.calls) == 50
    assert_stopped_by_a_limit(result)
