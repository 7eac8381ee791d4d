"""A limit hit inside an EXIT trap fails the run, though bashkit says nothing about it.

bashkit runs the script's EXIT trap (and a subshell's) after the last command and drops
whatever stops its handler: a limit of commands, loop iterations or time ends the handler, its
output is thrown away, and the run ended with the script's own status, no error and nothing on
stderr, however many tools the handler had called by then. Nothing is said to hear, so the
engine cannot tell whether a handler was stopped: a script that may set one counts as stopped.
"""

from __future__ import annotations

import time

import pytest

from jazzmine.bash import BashLimits, BashSession, ToolSpec
from tests.bash.limits import (
    CALLS,
    LIMITS,
    LOOP,
    USER,
    assert_stopped_by_a_limit,
    get_user,
    run_in_a_bash_sandbox,
)

SLOW = ToolSpec("slow", "Take a second", {"type": "object", "properties": {}})

TRAPS = {
    "trap ... EXIT": f"trap '{LOOP}' EXIT\necho hi\n",
    "trap ... exit": f"trap '{LOOP}' exit\necho hi\n",
    "trap ... 0": f"trap '{LOOP}' 0\necho hi\n",
    "trap -- ... SIGEXIT": f"trap -- '{LOOP}' SIGEXIT\necho hi\n",
    "a handler calling tools": f"trap '{CALLS}' EXIT\necho hi\n",
    "an exit after the trap": f"trap '{LOOP}' EXIT\necho hi\nexit 0\n",
    "a subshell's trap": f"( trap '{LOOP}' EXIT; echo in )\necho hi\n",
    "a trap set in a function": f"f() {{ trap '{LOOP}' EXIT; }}\nf\necho hi\n",
    "a trap set by eval": f"eval \"trap '{LOOP}' EXIT\"\necho hi\n",
    "a trap set through command": f"command trap '{LOOP}' EXIT\necho hi\n",
    "a trap named by an escape": f"$'\\x74rap' '{LOOP}' EXIT\necho hi\n",
    "a trap whose signal is computed": f"s=EX; s+=IT\ntrap '{LOOP}' \"$s\"\necho hi\n",
}


def slow() -> str:
    time.sleep(1)
    return "done\n"


def session(limits: BashLimits = LIMITS) -> BashSession:
    return BashSession([USER, SLOW], {"get_user": get_user, "slow": slow}, limits=limits)


@pytest.mark.parametrize("name", sorted(TRAPS))
def test_a_limit_hit_in_an_exit_trap_fails_the_run(name: str) -> None:
    result = session().run(TRAPS[name])
    assert_stopped_by_a_limit(result)


def test_the_tools_an_exit_trap_called_before_its_limit_are_still_traced() -> None:
    result = session().run(TRAPS["a handler calling tools"])
    assert len(result.calls) == 50
    assert_stopped_by_a_limit(result)


def test_running_out_of_time_inside_an_exit_trap_fails_the_run() -> None:
    limits = BashLimits(max_commands=500, max_loop_iterations=50, timeout_seconds=1)
    result = session(limits).run("trap 'slow; slow; slow' EXIT\necho hi\n")
    assert_stopped_by_a_limit(result)


@pytest.mark.docker
async def test_the_sandbox_run_fails_the_same_way(docker_client, base_image, tmp_path) -> None:
    result = await run_in_a_bash_sandbox(
        TRAPS["a handler calling tools"],
        sandbox="exit-trap-limits-bash", docker_client=docker_client, cache_dir=tmp_path,
    )  # fmt: skip
    assert result.stdout == "hi\n" and len(result.calls) == 50
    assert_stopped_by_a_limit(result)
