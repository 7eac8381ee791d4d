"""The whole loop with real parts: the fake server's policy, and scripts run under bubblewrap."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from jazzmine.core.tools import ScriptGenerator, body_offset
from jazzmine.llm import LLMConfig
from jazzmine.orchestrator import RunOutcome, solve
from jazzmine.sandbox import RunLimits, RunRequest
from jazzmine.sandbox.bwrap import BwrapRunner, bwrap_available
from jazzmine.sandbox.runtime import stage_runtime

AVAILABLE, WHY = bwrap_available()
pytestmark = pytest.mark.skipif(not AVAILABLE, reason=WHY)


@pytest.fixture
def runtime_dir() -> Iterator[Path]:
    """Return a runtime folder the sandbox user can read (pytest's tmp_path is root-only)."""
    base = Path(tempfile.mkdtemp(prefix="jazzmine-llm-"))
    base.chmod(0o755)
    yield base / "runtime"
    shutil.rmtree(base)


def sandbox_run(generator: ScriptGenerator, runtime_dir: Path):
    """Return a `run` callable that executes a script in a fresh bubblewrap sandbox."""
    stage_runtime(runtime_dir, generator.registry.tools("shop"))
    runner = BwrapRunner().bind(runtime_dir, RunLimits(timeout_seconds=20))

    async def run(script: str) -> RunOutcome:
        request = RunRequest(script=script, body_offset=body_offset(script))
        outcome = RunOutcome(success=False, error="the run ended without a result")
        async for event in runner.run(request):
            if event.type == "result":
                outcome = RunOutcome(success=True, result=event.data)
            elif event.type == "error":
                error = event.data.get("traceback") or event.data.get("message")
                outcome = RunOutcome(success=False, error=error)
        return outcome

    return run


async def test_the_policy_key_error_fails_in_the_sandbox_and_the_retry_succeeds(
    config: LLMConfig, generator: ScriptGenerator, runtime_dir: Path
) -> None:
    attempts = await solve(
        "Show the first order of user 7",
        "shop",
        generator=generator,
        llm=config,
        run=sandbox_run(generator, runtime_dir),
    )
    assert [a.status for a in attempts] == ["failed", "succeeded"]
    first, second = attempts
    assert first.outcome is not None and "KeyError: 0" in (first.outcome.error or "")
    assert "with an integer" in second.hint
    assert second.outcome is not None
    assert second.outcome.result["first"] == {"id": 1, "total": 9.5}
