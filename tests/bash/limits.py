"""What the bash limit tests share: a session with low limits, the same in a real bash sandbox,
and what they assert of a run a limit stopped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jazzmine.bash import BashLimits, BashResult, BashSession, ToolSpec, specs_for_sandbox
from jazzmine.bash.events import bash_final_events
from jazzmine.bash.sandbox import run_bash_in_sandbox
from jazzmine.core.tools import SandboxConfig, ToolParameter, ToolRegistry, ToolResponse
from jazzmine.sandbox import Outcome, RunLimits, SandboxBuilder

USER = ToolSpec("get_user", "Fetch a user by id", {
    "type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"],
})  # fmt: skip
LIMITS = BashLimits(max_commands=500, max_loop_iterations=50, timeout_seconds=20)
LOOP = "while true; do :; done"  # stopped at 50 iterations
CALLS = "for i in $(seq 1 100); do get_user --id $i >/dev/null; done"  # 50 calls, then stopped


def get_user(id: int) -> ToolResponse:
    return ToolResponse(success=True, data={"id": id})


def limited_session() -> BashSession:
    """Return a session calling `get_user`, under LIMITS."""
    return BashSession([USER], {"get_user": get_user}, limits=LIMITS)


GET_USER = """
def get_user(id: int) -> ToolResponse:
    return ToolResponse(success=True, data={"id": id})
"""


async def run_in_a_bash_sandbox(
    script: str,
    *,
    sandbox: str,
    docker_client: Any,
    cache_dir: Path,
    source: str = GET_USER,
    bash_limits: BashLimits = LIMITS,
    limits: RunLimits | None = None,
) -> BashResult:
    """Run a script under `bash_limits` in a real bash sandbox of `get_user` (the image runs
    its own copy of the engine's reading; `source` its code, `id` its one documented
    parameter); remove the images it took afterwards."""
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=sandbox))
    registry.register_source(
        source, sandbox=sandbox, description="Fetch a user by id",
        parameters=[ToolParameter("id", "int", "User id", required=True)],
    )  # fmt: skip
    builder = SandboxBuilder(registry, client=docker_client, cache_dir=cache_dir)
    try:
        return await run_bash_in_sandbox(
            script, sandbox_image=builder.ensure_image(sandbox).tag,
            specs=specs_for_sandbox(registry, sandbox), bash_limits=bash_limits, limits=limits,
            client=docker_client,
        )  # fmt: skip
    finally:
        builder.prune(sandbox, keep=0)  # this test's images, and the bash images on them


def assert_stopped_by_a_limit(result: BashResult) -> None:
    """The run failed, and both its error and its error event say a limit stopped it."""
    assert result.exit_code != 0, result
    assert "limit" in (result.error or ""), result
    events = dict(bash_final_events(result))
    assert "limit" in events["error"]["message"], events
    assert events["exit"]["outcome"] != Outcome.RESULT.value
