"""A script longer than a pipe holds (64 KiB) runs, in a fresh sandbox and from a warm pool.

The relay hands the request to the worker over a pipe. A ready worker waits stopped (so that
nothing a tool started as it loaded burns the CPU meanwhile), and it was let go only once the
whole request was written: a request longer than the pipe's buffer waited for a reader that
was stopped, and the run timed out. Scripts may be 200,000 characters long.
"""

from __future__ import annotations

import pytest

from jazzmine.sandbox import RunLimits, RunRequest
from jazzmine.sandbox.pool import WarmPool

from .both_backends import sandbox
from .bwrap_support import runtime_dir
from .helpers import collect, of_type

__all__ = ["runtime_dir", "sandbox"]  # the fixtures, used by name

LIMITS = RunLimits(memory_mb=256, pids_limit=32, timeout_seconds=15)


def long_script(chars: int) -> str:
    return "# " + "x" * chars + "\nemit_result(len('" + "y" * 1000 + "'))\n"


@pytest.mark.parametrize("chars", [70_000, 199_000])
async def test_it_runs_in_a_fresh_sandbox(sandbox, chars) -> None:
    events = await sandbox.run(long_script(chars), LIMITS)
    assert [e.data for e in of_type(events, "result")] == [1000], events[-2:]


@pytest.mark.docker
async def test_it_runs_from_a_warm_pool(runner, image) -> None:
    async with WarmPool(runner, image, LIMITS, size=1) as pool:
        for chars in (199_000, 199_000):  # twice: the pool's next sandbox as well
            events = await collect(pool.run(RunRequest(script=long_script(chars))))
            assert [e.data for e in of_type(events, "result")] == [1000], events[-2:]
