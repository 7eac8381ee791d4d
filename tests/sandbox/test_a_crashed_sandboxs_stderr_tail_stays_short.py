"""A sandbox that crashes after a flood of long stderr lines ends with a short message.

The message of a crash quotes the last lines the sandbox wrote to stderr; it is stored twice
(the error and the exit) and read by a person and by the retry prompt. Twenty lines of a
megabyte each made a message of 600 KB (the engine's 32 KiB frames, one per "line").
"""

from __future__ import annotations

import dataclasses

import pytest

from jazzmine.sandbox import Outcome, RunRequest

from .helpers import collect, final, of_type

pytestmark = pytest.mark.docker

FLOOD = (
    "import os\n"
    "for i in range(25):\n"
    "    os.write(2, b'y' * 1_000_000 + b'\\n')\n"
    "os.write(2, b'the last words\\n')\n"
    "os._exit(3)\n"
)


async def test_a_crash_after_a_stderr_flood_is_reported_in_a_short_message(
    hostile_runner, image, limits
) -> None:
    runner = hostile_runner.bind(image, dataclasses.replace(limits, max_output_bytes=40_000_000))
    events = await collect(runner.run(RunRequest(script=FLOOD, unrestricted=True)))
    end = final(events)
    assert end.outcome is Outcome.CONTAINER_CRASH, end
    (error,) = of_type(events, "error")
    for message in (end.data["message"], error.data["message"]):
        assert "exit code 3" in message
        assert "the last words" in message
        assert len(message) < 32_000, len(message)
