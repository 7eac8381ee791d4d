"""A sandbox runs as a uid of its own: what the kernel counts per uid, it counts per sandbox.

The kernel budgets some resources per uid across the whole host: the pages of every pipe a
user holds (`fs.pipe-user-pages-soft`, 16,384 by default), inotify instances, message queue
bytes. When every sandbox ran as uid 65534, a script past the validator in one sandbox took
that uid's pipe budget (100 pipes grown to 1 MiB: pages are counted as slots, so it costs
no memory) and, while it held them, no pipe of any other sandbox on the host could grow:
another team's run, started meanwhile, was refused with EPERM.

Here the hoarder takes its budget to the end (it is refused before its last pipe) and holds
it, and a second sandbox started meanwhile grows a pipe to 1 MiB, as a different uid. Through
Docker, and under bubblewrap when the worker is root (a worker that is not root can give its
sandboxes no uid but its own).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable

import pytest

from jazzmine.sandbox import Event, Outcome, RunRequest
from jazzmine.sandbox.identity import FIRST_UID, LAST_UID

from .bwrap_support import requires_bwrap, runtime_dir  # noqa: F401 (a fixture)
from .helpers import collect, final

HOARD = """
import fcntl, os, time
taken = refused = 0
held = []
for _ in range(100):
    read_end, write_end = os.pipe()
    held.append((read_end, write_end))
    try:
        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 1 << 20)
        taken += 1
    except PermissionError:
        refused += 1
emit_intermediate("holding", {"uid": os.getuid(), "taken": taken, "refused": refused})
time.sleep(60)
"""

PROBE = """
import fcntl, os
read_end, write_end = os.pipe()
try:
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 1 << 20)
    grown = True
except PermissionError:
    grown = False
emit_result({"uid": os.getuid(), "grown": grown, "size": fcntl.fcntl(write_end, fcntl.F_GETPIPE_SZ)})
"""


def unrestricted(script: str) -> RunRequest:
    return RunRequest(script=script, unrestricted=True)


async def holding(events: AsyncIterator[Event]) -> dict:
    """Read the hoarder's events until it holds its pipes; return what it says it took."""
    async for event in events:
        if event.type == "intermediate" and event.data["label"] == "holding":
            return event.data["data"]
        assert not event.is_final, event
    raise AssertionError("the hoarder ended before it held its pipes")


async def assert_the_budget_is_its_own(run: Callable[[RunRequest], AsyncIterator[Event]]) -> None:
    hoarder = run(unrestricted(HOARD))
    try:
        hoard = await holding(hoarder)
        # It took its uid's whole budget: its last pipes were refused.
        assert hoard["taken"] > 0 and hoard["refused"] > 0, hoard
        events = await collect(run(unrestricted(PROBE)))
    finally:
        await hoarder.aclose()  # its sandbox goes, with its pipes
    assert final(events).outcome is Outcome.RESULT, events
    (probe,) = [e.data for e in events if e.type == "result"]
    assert probe["grown"] and probe["size"] == 1 << 20, probe
    assert probe["uid"] != hoard["uid"]
    for uid in (probe["uid"], hoard["uid"]):
        assert FIRST_UID <= uid <= LAST_UID  # no account of the host (65534 is nobody's)


@pytest.mark.docker
async def test_in_containers_a_hoarded_pipe_budget_is_the_hoarders_alone(
    hostile_runner, image, limits
) -> None:
    await assert_the_budget_is_its_own(hostile_runner.bind(image, limits).run)


@requires_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="only a root worker gives each sandbox its uid")
async def test_under_bubblewrap_a_hoarded_pipe_budget_is_the_hoarders_alone(
    runtime_dir,  # noqa: F811
    limits,
) -> None:
    from jazzmine.sandbox.bwrap import BwrapRunner

    await assert_the_budget_is_its_own(
        BwrapRunner(allow_unrestricted=True).bind(runtime_dir, limits).run
    )
