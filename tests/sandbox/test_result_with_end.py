"""A result is handed on together with the run's end when that follows at once, and never lost.

The host waits briefly (`RESULT_GRACE_SECONDS`) after a result for the harness's `exit`, so
that the worker stores and announces both at once. These tests pin what that wait may and may
not do: the two come out with no turn of the event loop between them; a script that goes on
after its result gets its result out within the wait; whatever ends the run meanwhile (the
sandbox's death, its time limit, its output cap, a lost connection) still hands on the result
first, with every sequence number in order.
"""

from __future__ import annotations

import asyncio
import json
import time

from jazzmine.sandbox import Outcome, RunLimits, RunRequest
from jazzmine.sandbox.session import RESULT_GRACE_SECONDS, ExitInfo, drive

from .helpers import final

LIMITS = RunLimits(timeout_seconds=5, max_output_bytes=50_000)


def line(seq: int, type_: str, data: object) -> bytes:
    return json.dumps({"seq": seq, "type": type_, "data": data, "ts": 1.0}).encode() + b"\n"


RESULT = line(1, "result", {"n": 1})
EXIT = line(2, "exit", {"outcome": "result"})


class PacedProcess:
    """A sandbox whose chunks come after the given pauses; then it ends (or hangs, or fails)."""

    backend = "fake"

    def __init__(
        self, chunks: list[tuple[float, bytes]], *, then: str = "end", exit_code: int = 1
    ) -> None:
        self.chunks = list(chunks)
        self.then = then
        self.exit_code = exit_code
        self.killed = False

    async def write(self, data: bytes) -> None:
        pass

    async def read(self) -> tuple[str, bytes] | None:
        if self.chunks:
            pause, chunk = self.chunks.pop(0)
            await asyncio.sleep(pause)
            return "stdout", chunk
        if self.then == "hang":
            await asyncio.sleep(3600)
        if self.then == "lost":
            raise ConnectionResetError("the engine closed the stream")
        return None

    async def kill(self) -> None:
        self.killed = True

    async def wait(self) -> ExitInfo:
        return ExitInfo(exit_code=self.exit_code)


async def timed(process: PacedProcess, limits: RunLimits = LIMITS) -> list[tuple[float, object]]:
    """Drain a run; return each event with when it came out and whether the loop turned since."""
    started = time.monotonic()
    out: list[tuple[float, object]] = []
    turned = {"yes": False}
    async for event in drive(process, RunRequest(script="x"), limits):
        out.append((time.monotonic() - started, event, turned["yes"]))
        turned["yes"] = False
        asyncio.get_running_loop().call_soon(turned.update, {"yes": True})
    return out


async def test_a_result_and_the_end_that_follows_it_come_out_together():
    for gap in (0.0, RESULT_GRACE_SECONDS / 3):
        events = await timed(PacedProcess([(0, RESULT), (gap, EXIT)]))
        (_, result, _), (_, end, turned) = events
        assert (result.type, end.type, end.outcome) == ("result", "exit", Outcome.RESULT)
        # Nothing else ran in between: the worker's recorder sees both in one batch.
        assert turned is False


async def test_a_result_in_one_chunk_with_its_end_comes_out_at_once():
    events = await timed(PacedProcess([(0, RESULT + EXIT)]))
    assert [e.type for _, e, _ in events] == ["result", "exit"]
    assert events[1][2] is False


async def test_a_script_that_goes_on_after_its_result_gets_it_out_within_the_wait():
    process = PacedProcess(
        [(0, RESULT), (0.3, line(2, "log", {"message": "after", "stream": "stdout"})),
         (0, line(3, "exit", {"outcome": "result"}))]
    )  # fmt: skip
    events = await timed(process)
    assert [e.type for _, e, _ in events] == ["result", "log", "exit"]
    at, result, _ = events[0]
    assert result.type == "result"
    assert at < 0.15, f"the result waited {at * 1000:.0f} ms for the next line"
    assert events[1][0] >= 0.3
    assert [e.seq for _, e, _ in events] == [1, 2, 3]


async def test_a_result_then_more_events_in_the_same_chunk_is_not_held():
    log = line(2, "log", {"message": "x", "stream": "stdout"})
    events = await timed(
        PacedProcess([(0, RESULT + log), (0.3, line(3, "exit", {"outcome": "result"}))])
    )
    assert [e.type for _, e, _ in events] == ["result", "log", "exit"]
    assert events[0][0] < 0.15


async def test_a_sandbox_that_dies_after_its_result_still_hands_the_result_on_first():
    events = [e for _, e, _ in await timed(PacedProcess([(0, RESULT)], exit_code=137))]
    assert [e.type for e in events] == ["result", "error", "exit"]
    assert final(events).outcome is Outcome.CONTAINER_CRASH
    assert [e.seq for e in events] == [1, 2, 3]


async def test_a_sandbox_that_hangs_after_its_result_hands_it_on_then_times_out():
    limits = RunLimits(timeout_seconds=0.3, max_output_bytes=50_000)
    process = PacedProcess([(0, RESULT)], then="hang")
    events = await timed(process, limits)
    assert events[0][0] < 0.15
    kinds = [e.type for _, e, _ in events]
    assert kinds == ["result", "error", "exit"]
    assert events[-1][1].outcome is Outcome.TIMEOUT
    assert process.killed


async def test_a_result_over_the_output_cap_is_cut_not_held():
    limits = RunLimits(timeout_seconds=5, max_output_bytes=len(RESULT) + 10)
    process = PacedProcess([(0, RESULT), (0, line(2, "log", {"message": "y" * 40, "stream": "s"}))])
    events = [e for _, e, _ in await timed(process, limits)]
    assert [e.type for e in events] == ["result", "error", "exit"]
    assert final(events).outcome is Outcome.OUTPUT_LIMIT
    assert process.killed


async def test_a_connection_lost_after_a_result_hands_the_result_on_first():
    process = PacedProcess([(0, RESULT)], then="lost")
    events = [e for _, e, _ in await timed(process)]
    assert [e.type for e in events] == ["result", "error", "exit"]
    assert final(events).outcome is Outcome.CONTAINER_CRASH
    assert "lost the connection" in final(events).data["message"]


async def test_a_second_result_after_a_held_one_is_still_a_protocol_error():
    events = [e for _, e, _ in await timed(PacedProcess([(0, RESULT), (0, line(2, "result", 2))]))]
    assert [e.type for e in events] == ["result", "error", "exit"]
    assert final(events).outcome is Outcome.PROTOCOL_ERROR


async def test_a_run_closed_while_its_result_waits_stops_reading():
    process = PacedProcess([(0, RESULT)], then="hang")
    events = drive(process, RunRequest(script="x"), LIMITS)
    first = await events.__anext__()  # the grace passes with nothing more: out it comes
    assert first.type == "result"
    await events.aclose()  # the caller stops the run: the pending read must not linger
    await asyncio.sleep(0)
    pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert not pending, pending
