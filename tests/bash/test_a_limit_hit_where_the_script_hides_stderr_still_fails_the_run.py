"""A limit that stops part of a bash script fails the run, wherever that part sends its stderr.

bashkit fails the whole execution when a limit is hit, except inside a background job
(`cmd &`), a coproc or `compgen -W`: there only that part ends, the reason is one line on its
stderr, and the script goes on. The engine learnt of such a hit only from that line in the
run's final stderr, so a script that sent the part's stderr elsewhere (`2>/dev/null`, `&>`,
`2>&-`, `2>&1` into a variable or a pipe, `|&`) or filled stderr past its cap first ended
"successfully" with whatever it had produced: the reviewer and the user never learnt that it
was stopped early. Where the engine cannot tell whether such a part hit a limit, the run counts
as stopped by one.
"""

from __future__ import annotations

import pytest

from jazzmine.bash import BashLimits, BashResult, BashSession, ToolSpec, specs_for_sandbox
from jazzmine.bash.sandbox import run_bash_in_sandbox
from jazzmine.core.tools import SandboxConfig, ToolParameter, ToolRegistry, ToolResponse
from jazzmine.sandbox import RunLimits, SandboxBuilder
from tests.bash.limits import assert_stopped_by_a_limit

USER = ToolSpec("get_user", "Fetch a user by id", {
    "type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"],
})  # fmt: skip
LIMITS = BashLimits(max_commands=500, max_loop_iterations=50, timeout_seconds=20)
LOOP = "while true; do :; done"  # stopped at 50 iterations
JOB = f"{{ {LOOP}; }} & wait"  # a background job that hits the loop limit

# Each hides the job's line from the run's stderr; `echo done` then ends the script with 0.
HIDING = {
    "a group's 2>/dev/null": f"{{ {JOB}; }} 2>/dev/null\necho done\n",
    "a subshell's 2>/dev/null": f"( {JOB} ) 2>/dev/null\necho done\n",
    "&>/dev/null": f"{{ {JOB}; }} &>/dev/null\necho done\n",
    "2>&- closing stderr": f"{{ {JOB}; }} 2>&-\necho done\n",
    "2>&1 into a variable": f'out=$( {{ {JOB}; }} 2>&1 )\necho "done ${{#out}}"\n',
    "2>&1 into a pipe": f"{{ {JOB}; }} 2>&1 | wc -l >/dev/null\necho done\n",
    "|& into a pipe": f"{{ {JOB}; }} |& wc -l >/dev/null\necho done\n",
    "a function called with 2>/dev/null": f"f() {{ {JOB}; }}\nf 2>/dev/null\necho done\n",
    "a function defined with 2>/dev/null": f"f() {{ {JOB}; }} 2>/dev/null\nf\necho done\n",
    "a loop's 2>/dev/null": f"for i in 1; do {{ {LOOP}; }} & done 2>/dev/null\nwait\necho done\n",
    "a job never waited for": f"{{ {{ {LOOP}; }} & }} 2>/dev/null\necho done\n",
    "set +e and || true": f"set +e\n{{ {JOB}; }} 2>/dev/null || true\necho done\n",
    "exec 2>/dev/null on top": f"exec 2>/dev/null\n{{ {JOB}; }} 2>/dev/null\necho done\n",
    "eval of a literal string": f"eval '{JOB}' 2>/dev/null\necho done\n",
    "eval of a string built at run time": (
        f"amp=$(printf '\\x26')\neval \"{{ {LOOP}; }} $amp wait\" 2>/dev/null\necho done\n"
    ),
    "a coproc": f"{{ coproc {{ {LOOP}; }}; }} 2>/dev/null\necho done\n",
    "compgen -W": f"compgen -W '$({LOOP})' x 2>/dev/null\necho done\n",
    "too many commands in a job": (
        "{ ( for i in $(seq 1 40); do for j in $(seq 1 40); do :; done; done ) & wait; }"
        " 2>/dev/null\necho done\n"
    ),
    "too deep a recursion in a job": "f() { f; }\n{ f & wait; } 2>/dev/null\necho done\n",
    "too big a variable in a job": (
        '{ { s=x; for i in $(seq 1 30); do s="$s$s"; done; } & wait; } 2>/dev/null\necho done\n'
    ),
    "stderr filled past its cap first": (
        f's=x; for i in $(seq 1 21); do s="$s$s"; done; echo "$s" >&2\n{JOB}\necho done\n'
    ),
}


def get_user(id: int) -> ToolResponse:
    return ToolResponse(success=True, data={"id": id})


def run(script: str) -> BashResult:
    return BashSession([USER], {"get_user": get_user}, limits=LIMITS).run(script)


@pytest.mark.parametrize("name", sorted(HIDING))
def test_a_limit_hit_in_a_part_whose_stderr_is_hidden_fails_the_run(name: str) -> None:
    assert_stopped_by_a_limit(run(HIDING[name]))


def test_a_job_refused_past_the_nesting_limit_fails_the_run() -> None:
    # bashkit refuses a job nested 32 deep with a `fork: retry` line (no "resource limit"):
    # `echo deep` never ran, and the run ended with 0.
    script = "echo deep"
    for _ in range(40):
        script = f"{{ {script} & wait; }}"
    result = run(script + "\necho done\n")
    assert "deep" not in result.stdout
    assert_stopped_by_a_limit(result)
    assert "background jobs" in (result.error or "")


GET_USER = """
def get_user(id: int) -> ToolResponse:
    return ToolResponse(success=True, data={"id": id})
"""
SANDBOX = "hidden-limits-bash"
IN_THE_SANDBOX = [
    "a group's 2>/dev/null",
    "2>&1 into a variable",
    "eval of a string built at run time",
    "stderr filled past its cap first",
]


@pytest.fixture(scope="module")
def sandbox(docker_client, base_image, tmp_path_factory):
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=SANDBOX))
    registry.register_source(
        GET_USER, sandbox=SANDBOX, description="Fetch a user by id",
        parameters=[ToolParameter("id", "int", "User id", required=True)],
    )  # fmt: skip
    builder = SandboxBuilder(registry, client=docker_client,
                             cache_dir=tmp_path_factory.mktemp("cache"))  # fmt: skip
    try:
        yield builder.ensure_image(SANDBOX).tag, specs_for_sandbox(registry, SANDBOX)
    finally:
        builder.prune(SANDBOX, keep=0)  # this module's images, and the bash images on them


@pytest.mark.docker
@pytest.mark.parametrize("name", IN_THE_SANDBOX)
async def test_the_sandbox_run_fails_the_same_way(sandbox, docker_client, name: str) -> None:
    image, specs = sandbox
    result = await run_bash_in_sandbox(
        f"get_user --id 1 >/dev/null\n{HIDING[name]}", sandbox_image=image, specs=specs,
        bash_limits=LIMITS, client=docker_client,
        limits=RunLimits(max_output_bytes=8_000_000),  # room for the 1 MiB of stderr
    )  # fmt: skip
    assert [c.name for c in result.calls] == ["get_user"]
    assert_stopped_by_a_limit(result)
