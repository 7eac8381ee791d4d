"""A run ends at its cap on events, as it does at its cap on bytes.

Each event is parsed by the worker, stored as a row and sent to every watcher, so a loop of
empty logs under a 50 MB output cap (half a million events) cost the host far more than its
bytes. Past `max_events` the run is cut like an output flood: the events up to the cap are
kept, then one error and the exit, numbered on from them, and no container is left.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from jazzmine.sandbox import Outcome, RunRequest
from jazzmine.sandbox.pool import WarmPool

from .helpers import collect, final, of_type

pytestmark = pytest.mark.docker

FLOOD = "while True:\n    emit_log('')\n"


async def test_a_flood_of_empty_logs_is_cut_at_the_event_limit(runner, image, limits):
    capped = replace(limits, max_events=200)
    events = await collect(runner.bind(image, capped).run(RunRequest(script=FLOOD)))
    assert final(events).outcome is Outcome.OUTPUT_LIMIT
    assert len(of_type(events, "log")) == 200
    marker = of_type(events, "error")[-1].data
    assert marker["kind"] == "output_limit"
    assert "event limit of 200 events" in marker["message"]
    assert [e.seq for e in events] == list(range(1, 203))  # nothing skipped, nothing twice


async def test_a_run_of_as_many_events_as_the_limit_ends_with_its_result(runner, image, limits):
    capped = replace(limits, max_events=200)
    script = "for i in range(199):\n    emit_log(str(i))\nemit_result(199)\n"
    async with WarmPool(runner, image, capped, size=1) as pool:
        for _ in range(2):  # a second run starts as freshly as the first
            events = await collect(pool.run(RunRequest(script=script)))
            assert final(events).outcome is Outcome.RESULT, final(events)
            assert of_type(events, "result")[0].data == 199
