"""A script's longest texts (one printed line, one log, one exception message) end the run as
what they are, output or the script's error, never as a crashed sandbox.

The relay refuses any line past the protocol's bound (8 MiB) and ends the worker for it: the
harness itself must never write one, whatever the script prints.
"""

from __future__ import annotations

import dataclasses

import pytest

from jazzmine.core.tools import validate_script
from jazzmine.sandbox import Outcome, RunRequest
from jazzmine.sandbox.pool import WarmPool

from .helpers import collect, final, of_type

pytestmark = pytest.mark.docker

# Past the protocol's line bound as one line; the emoji is 12 bytes as ASCII JSON, the most
# any character takes, and "Z" marks the end.
LONG = "'\\U0001F600' * 800_000 + 'Z'"
SCRIPTS = {
    "print": f"print({LONG})\nemit_result(1)\n",
    "print_without_newline": f"print({LONG}, end='')\nemit_result(1)\n",
    "emit_log": f"emit_log({LONG})\nemit_result(1)\n",
    "print_after_the_result": f"emit_result(1)\nprint({LONG})\n",
}


@pytest.fixture
async def roomy(runner, image, limits):
    """A pool whose output limit lets the whole text through."""
    room = dataclasses.replace(limits, max_output_bytes=40_000_000, memory_mb=256)
    async with WarmPool(runner, image, room, size=1) as pool:
        yield pool


@pytest.fixture
async def pool(runner, image, limits):
    async with WarmPool(runner, image, limits, size=1) as pool:
        yield pool


def test_the_scripts_pass_the_validator() -> None:
    for name, script in SCRIPTS.items():
        assert validate_script(script, []) == [], name


@pytest.mark.parametrize("name", sorted(SCRIPTS))
async def test_a_text_longer_than_a_line_arrives_whole_and_in_order(roomy, name: str) -> None:
    events = await collect(roomy.run(RunRequest(script=SCRIPTS[name])))
    assert final(events).outcome is Outcome.RESULT, final(events)
    logs = [e.data["message"] for e in of_type(events, "log")]
    assert len(logs) > 1  # it went as several events, each within the bound
    assert "".join(logs).rstrip("\n") == "\U0001f600" * 800_000 + "Z"
    assert [e.seq for e in events] == list(range(events[0].seq, events[0].seq + len(events)))


@pytest.mark.parametrize("name", ["print", "emit_log"])
async def test_past_the_output_limit_it_ends_as_output_limit(pool, name: str) -> None:
    events = await collect(pool.run(RunRequest(script=SCRIPTS[name])))
    assert final(events).outcome is Outcome.OUTPUT_LIMIT, final(events)


async def test_a_huge_exception_message_is_cut_for_the_reader(pool) -> None:
    script = "raise ValueError('x' * 9_000_000)\nemit_result(1)\n"
    assert validate_script(script, []) == []
    events = await collect(pool.run(RunRequest(script=script)))
    assert final(events).outcome is Outcome.SCRIPT_ERROR, final(events)
    (error,) = of_type(events, "error")
    assert error.data["exception"] == "ValueError"
    assert "more characters cut" in error.data["message"]
    assert len(error.data["message"]) < 100_000
