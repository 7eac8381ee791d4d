"""A cap of one of bashkit's own commands fails the run; no tool runs past the time limit.

Found by trying it: bashkit's awk stops a loop at the sandbox's iteration limit, its seq at
100,000 lines, sed a branch loop at 1,000 rounds, jq a value at 32 MB, printf a width at
10,000, each saying so on its own stderr only, and the script went on with what it got: a run
summing 1..150000 through seq and awk "succeeded" with 5000050000 (11250075000 is right).
Now their lines count as a limit hit, and a script that may send such a command's stderr
elsewhere is refused before it runs, as one hiding a background job's is. And tools called
after the time limit ran out (behind a long command of bashkit's own, which it does not
interrupt) ran with their side effects; none runs now.
"""

from __future__ import annotations

import pytest

from jazzmine.bash import BashLimits, BashSession
from jazzmine.bash.blindspots import limit_blind_spot
from jazzmine.core.tools import ToolResponse
from jazzmine.sandbox import RunLimits
from tests.bash.limits import (
    USER,
    assert_stopped_by_a_limit,
    limited_session,
    run_in_a_bash_sandbox,
)

CAPPED = {
    "seq's lines, summed by awk": (
        "total=$(seq 1 150000 | awk '{s+=$1} END{print s}')\necho \"sum $total\"\n"
    ),
    "awk's loop iterations": "n=$(awk 'BEGIN{for(i=0;i<100;i++) c++; print c}')\necho \"[$n]\"\n",
    "seq's lines in a pipe": 'echo "last=$(seq 1 150000 | tail -n 1)"\n',
    "sed's branch loop": "echo a | sed ':x; s/a/a/; tx'\necho done\n",
    "printf's width": "printf '%*s' 100000000 x | wc -c\necho done\n",
}


@pytest.mark.parametrize("name", sorted(CAPPED))
def test_a_command_stopped_at_its_own_cap_fails_the_run(name: str) -> None:
    assert limit_blind_spot(CAPPED[name]) is None  # nothing hides its line
    result = limited_session().run(CAPPED[name])
    assert_stopped_by_a_limit(result)
    assert "a cap of its own" in (result.error or "") or "limit" in (result.error or "")


def test_within_its_caps_the_same_pipeline_succeeds() -> None:
    result = limited_session().run(
        "total=$(seq 1 1000 | awk '{s+=$1} END{print s}')\necho $total\n"
    )
    assert (result.exit_code, result.error, result.stdout) == (0, None, "500500\n")


@pytest.mark.parametrize(
    "script",
    [
        "n=$(awk 'BEGIN{for(i=0;i<100;i++) c++; print c}' 2>/dev/null)\necho $n\n",
        "jq -n '[range(10)]' 2>/dev/null\n",
        "{ seq 1 150000 | tail -n 1; } 2>/dev/null\n",
        "seq 1 150000 2>&1 | tail -n 1\n",
        "echo a | sed ':x; s/a/a/; tx' &>/dev/null\n",
        "xargs -n1 awk 'BEGIN{print 1}' 2>&-\n",
        "eval 'jq -n 1' 2>/dev/null\n",
        "f() { jq -n 1; }\nf 2>/dev/null\n",
        "for i in 1; do seq 1 5; done 2>/dev/null\n",
        "command jq -n 1 2>/dev/null\n",
        '"j"q -n 1 2>/dev/null\n',
        "s\\\ned 's/a/b/' 2>/dev/null\n",
    ],
)
def test_a_script_that_may_hide_such_a_line_is_refused_before_it_runs(script: str) -> None:
    blind = limit_blind_spot(script)
    assert blind is not None and "a cap of its own" in blind, blind


@pytest.mark.parametrize(
    "script",
    [
        "get_user --id 1 2>/dev/null\necho done\n",
        "get_user --id 1 2>/dev/null | jq .id\n",  # jq's own stderr still reaches the run
        "eval 'get_user --id 1' 2>/dev/null | jq .id\n",
        "echo 'a;b' 2>/dev/null; jq -n 1\n",
    ],
)
def test_stderr_sent_elsewhere_from_other_commands_is_still_fine(script: str) -> None:
    assert limit_blind_spot(script) is None


def test_no_tool_runs_once_the_time_limit_is_used_up() -> None:
    called: list[int] = []

    def get_user(id: int) -> ToolResponse:
        called.append(id)
        return ToolResponse(success=True, data={"id": id})

    limits = BashLimits(max_commands=500, max_loop_iterations=10_000_000, timeout_seconds=1)
    session = BashSession([USER], {"get_user": get_user}, limits=limits)
    # bashkit does not interrupt a command of its own (a long jq) at the time limit.
    script = "jq -n 'last(range(1e15))' >/dev/null\nfor i in 1 2 3; do get_user --id $i; done\n"
    result = session.run(script)
    assert called == [] and result.calls == []
    assert_stopped_by_a_limit(result)
    assert "time limit of 1 s" in (result.error or "") and "EXIT trap" not in (result.error or "")


def test_tools_called_in_time_still_run() -> None:
    called: list[int] = []

    def get_user(id: int) -> ToolResponse:
        called.append(id)
        return ToolResponse(success=True, data={"id": id})

    session = BashSession([USER], {"get_user": get_user}, limits=BashLimits(timeout_seconds=5))
    assert session.run("get_user --id 1\nget_user --id 2\n").exit_code == 0
    assert called == [1, 2]


def test_a_calls_event_keeps_a_few_hundred_characters_of_its_arguments() -> None:
    # A loop passing a big variable to every call made each event as big, and the events the
    # run's whole output.
    script = 'x=$(printf "%5000s" a)\nget_user --id 1 --note "$x" || true\nget_user --id 2\n'
    result = limited_session().run(script)
    big, small = result.calls
    shown = big.args["(arguments)"]
    assert len(shown) < 700 and "characters in all" in shown, shown
    assert small.args == {"id": 2}


@pytest.mark.docker
async def test_many_calls_within_the_limits_are_not_cut_at_the_output_cap(
    docker_client, base_image, tmp_path
) -> None:
    # 9,000 calls, each its own event, under the sandbox's 1 MB output cap: the run was
    # killed at "output limit" (the events alone pass it), its result lost.
    result = await run_in_a_bash_sandbox(
        "for i in $(seq 9000); do get_user --id 0 >/dev/null; done\necho done\n",
        sandbox="many-calls-bash",
        docker_client=docker_client,
        cache_dir=tmp_path,
        bash_limits=BashLimits(max_commands=10_000, timeout_seconds=120),
        limits=RunLimits(timeout_seconds=120),
    )
    assert (result.exit_code, result.error, result.stdout) == (0, None, "done\n"), result.error
    assert len(result.calls) == 9000 and [c.seq for c in result.calls[-2:]] == [8999, 9000]
