"""Output that bashkit cut at its cap fails the run as an output limit, never a result.

bashkit keeps at most 1 MiB of a script's stdout (and as much of its stderr) and marks the rest
as cut; the engine carried the marks but nothing read them, so a run whose result was cut short
ended as a success with the first MiB as if it were the whole answer.
"""

from __future__ import annotations

import pytest

from jazzmine.bash import BashLimits, BashSession, specs_for_sandbox
from jazzmine.bash.events import bash_final_events
from jazzmine.bash.sandbox import run_bash_in_sandbox
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
