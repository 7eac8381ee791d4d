"""What the bubblewrap suites share: the availability gate, a staged runtime, a run helper."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from jazzmine.sandbox import Event, RunLimits, RunRequest, SandboxBuilder
from jazzmine.sandbox.bwrap import BwrapRunner, bwrap_available

from .helpers import collect
from .sample_tools import TEST_SANDBOX, make_registry

AVAILABLE, WHY = bwrap_available()
if not AVAILABLE and os.environ.get("JAZZMINE_REQUIRE_BWRAP"):
    # scripts/test.sh installs bubblewrap: there, a missing sandbox is a failure, not a skip.
    raise RuntimeError(f"the bubblewrap suite must run here: {WHY}")
requires_bwrap = pytest.mark.skipif(not AVAILABLE, reason=WHY)


@pytest.fixture(scope="module")
def runtime_dir() -> Iterator[Path]:
    # Outside pytest's 0700 tmp tree: when started as root the sandbox runs as nobody.
    # Not named as a run directory (jazzmine-bwrap-*), which a run's staging may sweep.
    root = Path(tempfile.mkdtemp(prefix="jazzmine-suite-bwrap-"))
    root.chmod(0o755)
    builder = SandboxBuilder(make_registry(), cache_dir=root / "cache")
    builder.stage(TEST_SANDBOX, root / "runtime")
    yield root / "runtime"
    shutil.rmtree(root, ignore_errors=True)


async def run_unrestricted(runtime_dir: Path, script: str, limits: RunLimits) -> list[Event]:
    """Run a script with real builtins (test-only) to prove the sandbox's own walls hold."""
    runner = BwrapRunner(allow_unrestricted=True).bind(runtime_dir, limits)
    request = RunRequest(script=script, unrestricted=True)
    return await collect(runner.run(request))
