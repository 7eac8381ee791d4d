"""An LLM answer is checked off the web process's event loop, and one far longer than any script
is cut off, never parsed, and refused as too long.

The endpoint is untrusted (any member may name their own): it may send up to the client's
bound of 16 MiB. The loop read it whole and then parsed it on the web process's event loop, to
see whether it was a program or prose around a fence: 2.4 MB of `x=1;` took seconds of CPU
holding the GIL (and gigabytes at 16 MiB), during which no socket of that process, anyone's,
was answered. Nothing that long can be a script (the validator refuses one past its limit).
A bash answer of a few kilobytes of nested `$(` took as long to check (the check reads each
substitution on its own), on the event loop too.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from channels.db import database_sync_to_async

from jazzmine.core.tools.validator import MAX_SCRIPT_CHARS
from jazzmine_web.playground.models import Attempt
from tests.web.helpers import collect_until, playground_socket

pytestmark = [pytest.mark.django_db(transaction=True)]

# Nested substitutions: seconds of bashkit analyses to check, 5 KB long.
NESTED = "echo " + "$(echo " * 700 + "hi" + ")" * 700 + "\n"
# One streamed piece (the fake splits on whitespace) of a program that parses.
HUGE = "x=1;" * 600_000 + "emit_result(x)"


async def _longest_stall(stop: asyncio.Event) -> float:
    """Return the longest time this event loop went without running a 20 ms ticker."""
    longest = 0.0
    last = time.monotonic()
    while not stop.is_set():
        await asyncio.sleep(0.02)
        now = time.monotonic()
        longest = max(longest, now - last)
        last = now
    return longest


async def _generate(member, sandbox, *, language: str = "python") -> tuple[list[dict], float]:
    """Press Generate; return the socket's messages and the event loop's longest stall."""
    stop = asyncio.Event()
    ticker = asyncio.create_task(_longest_stall(stop))
    ws = await playground_socket(member)
    try:
        await ws.send_json_to(
            {"type": "generate", "sandbox": sandbox.pk, "task": "Count", "language": language}
        )
        messages = await collect_until(ws, "generation_finished", timeout=120)
    finally:
        await ws.disconnect()
        stop.set()
    return messages, await ticker


async def test_a_huge_answer_is_refused_without_stalling_other_sockets(
    ecommerce, member, llm
) -> None:
    llm.script(HUGE)
    messages, stalled = await _generate(member, ecommerce)
    assert stalled < 1.0, f"the web process's event loop stalled for {stalled:.1f} s"
    validated = next(m for m in messages if m["type"] == "validated")
    assert any("characters long" in v for v in validated["violations"]), validated
    generated = next(m for m in messages if m["type"] == "generated")
    attempt = await database_sync_to_async(Attempt.objects.get)(pk=generated["attempt_id"])
    assert len(attempt.raw_answer) <= 2 * MAX_SCRIPT_CHARS


async def test_a_bash_answer_slow_to_check_is_checked_without_stalling_other_sockets(
    ecommerce, member, llm
) -> None:
    llm.script(NESTED)
    messages, stalled = await _generate(member, ecommerce, language="bash")
    assert stalled < 1.0, f"the web process's event loop stalled for {stalled:.1f} s"
    assert any(m["type"] == "validated" for m in messages)
