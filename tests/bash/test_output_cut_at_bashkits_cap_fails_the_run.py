"""Output that bashkit cut at its cap fails the run as an output limit, never a result.

bashkit keeps at most 1 MiB of a script's stdout (and as much of its stderr) and marks the rest
as cut; the engine carried the marks but nothing read them, so a run whose result was cut short
ended as a success with the first MiB as if it were the whole answer.
"""

from __future__ import annotations

import pytest

from jazzmine.bash import BashLimits, BashSession, specs_for_sandbox
from jazzmine.bash.engine import BashResult
from jazzmine.bash.events import bash_final_events
from jazzmine.bash.sandbox import output_held, run_bash_in_sandbox
from jazzmine.core.tools import SandboxConfig, ToolRegistry
from jazzmine.sandbox import Outcome, RunLimits, SandboxBuilder

TWO_MIB = 's=x; for i in $(seq 1 21); do s="$s$s"; done\n'
SCRIPTS = {
    "stdout": TWO_MIB + 'echo "$s"\n',
    "stderr": TWO_MIB + 'echo "$s" >&2\necho done\n',
}


@pytest.mark.parametrize("stream", sorted(SCRIPTS))
def test_a_cut_stream_fails_the_run_as_an_output_limit(stream: str) -> None:
    result = BashSession([], {}, limits=BashLimits()).run(SCRIPTS[stream])
    assert getattr(result, f"{stream}_truncated")
    assert result.exit_code != 0 and "output limit" in (result.error or ""), result.error
    events = dict(bash_final_events(result))
    assert events["exit"]["outcome"] == Outcome.OUTPUT_LIMIT.value
    assert "output limit" in events["error"]["message"]


SANDBOX = "output-cap-bash"
NOTHING = """
def nothing() -> ToolResponse:
    return ToolResponse(success=True)
"""


@pytest.mark.docker
async def test_the_sandbox_run_fails_the_same_way(docker_client, base_image, tmp_path) -> None:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=SANDBOX))
    registry.register_source(NOTHING, sandbox=SANDBOX, description="Do nothing")
    builder = SandboxBuilder(registry, client=docker_client, cache_dir=tmp_path)
    try:
        result = await run_bash_in_sandbox(
            SCRIPTS["stdout"], sandbox_image=builder.ensure_image(SANDBOX).tag,
            specs=specs_for_sandbox(registry, SANDBOX), client=docker_client,
            limits=RunLimits(max_output_bytes=8_000_000),  # room for the whole result line
        )  # fmt: skip
    finally:
        builder.prune(SANDBOX, keep=0)  # this test's images, and the bash images on them
    assert result.stdout_truncated and result.exit_code != 0
    assert dict(bash_final_events(result))["exit"]["outcome"] == Outcome.OUTPUT_LIMIT.value


def test_output_past_the_sandboxs_own_limit_is_cut_there_and_fails_the_run() -> None:
    # The container's cap is sized for the protocol around the output, so a bash script was
    # never held to the sandbox's `max_output_bytes`: 50 KB printed under 10,000 was stored
    # whole, the run a success. Cut at a character's boundary, as a Python run is.
    printed = BashResult(stdout="é" * 30_000, stderr="warning\n", exit_code=0, error=None)
    held = output_held(printed, 10_000)
    assert len(held.stdout.encode()) <= 10_000 and held.stdout == "é" * 5_000
    assert held.stderr == "" and held.stdout_truncated and held.stderr_truncated
    assert held.exit_code == 1 and held.error.startswith("output limit of 10000 bytes reached")
    events = dict(bash_final_events(held))
    assert events["exit"]["outcome"] == Outcome.OUTPUT_LIMIT.value
    assert "output limit of 10000 bytes" in events["error"]["message"]
    within = BashResult(stdout="ok\n", stderr="", exit_code=0, error=None)
    assert output_held(within, 10_000) == within


@pytest.mark.docker
async def test_a_sandbox_run_is_held_to_the_sandboxs_output_limit(
    docker_client, base_image, tmp_path
) -> None:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=SANDBOX))
    registry.register_source(NOTHING, sandbox=SANDBOX, description="Do nothing")
    builder = SandboxBuilder(registry, client=docker_client, cache_dir=tmp_path)
    fifty_kb = "x=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa; for i in 1 2 3 4 5 6 7 8 9 10; do x=$x$x; done; echo $x\n"
    try:
        result = await run_bash_in_sandbox(
            fifty_kb, sandbox_image=builder.ensure_image(SANDBOX).tag,
            specs=specs_for_sandbox(registry, SANDBOX), client=docker_client,
            limits=RunLimits(max_output_bytes=10_000),
        )  # fmt: skip
    finally:
        builder.prune(SANDBOX, keep=0)
    assert len(result.stdout) == 10_000 and result.stdout_truncated
    assert dict(bash_final_events(result))["exit"]["outcome"] == Outcome.OUTPUT_LIMIT.value


def test_a_long_stderr_is_quoted_from_a_whole_line() -> None:
    lines = [f"line {n}: maximum function depth exceeded (16)" for n in range(400)]
    failed = BashResult(stdout="", stderr="\n".join(lines), exit_code=1, error=None)
    message = dict(bash_final_events(failed))["error"]["message"]
    quoted = message.split(": ", 1)[1]
    assert quoted.startswith("…\nline ") and quoted.endswith(
        "line 399: maximum function depth exceeded (16)"
    )
    assert len(quoted) <= 4002
