"""The host refuses every event that breaks the protocol and ends the run once, saying why."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jazzmine.sandbox import Outcome, RunLimits, RunRequest
from jazzmine.sandbox.events import MAX_SAFE_INT, ProtocolError, parse_event
from jazzmine.sandbox.session import ExitInfo, drive

from .helpers import collect, final, of_type

LIMITS = RunLimits(timeout_seconds=5, max_output_bytes=50_000_000)


class FakeProcess:
    """A sandbox that says exactly the bytes a test gives it, then ends."""

    backend = "fake"

    def __init__(self, chunks: list[bytes], exit_code: int = 0) -> None:
        self.chunks = list(chunks)
        self.killed = False
        self.exit_code = exit_code

    async def write(self, data: bytes) -> None:
        pass

    async def read(self):
        if self.killed or not self.chunks:
            return None
        return "stdout", self.chunks.pop(0)

    async def kill(self) -> None:
        self.killed = True

    async def wait(self) -> ExitInfo:
        return ExitInfo(exit_code=self.exit_code)


def line(seq: int, type_: str, data: object, ts: float = 1.0) -> bytes:
    return json.dumps({"seq": seq, "type": type_, "data": data, "ts": ts}).encode() + b"\n"


def log(seq: int, message: str = "hi") -> bytes:
    return line(seq, "log", {"message": message, "stream": "emit_log"})


async def run_lines(*chunks: bytes) -> tuple[list, FakeProcess]:
    process = FakeProcess(list(chunks))
    events = await collect(drive(process, RunRequest(script="x"), LIMITS))
    return events, process


async def assert_protocol_error(*chunks: bytes, why: str) -> None:
    events, process = await run_lines(*chunks)
    end = final(events)
    assert end.outcome is Outcome.PROTOCOL_ERROR, events
    assert why in end.data["message"], end.data["message"]
    assert process.killed


async def test_a_well_formed_run_ends_with_the_harness_outcome():
    events, process = await run_lines(
        log(1), line(2, "result", 5), line(3, "exit", {"outcome": "result"})
    )
    assert final(events).outcome is Outcome.RESULT
    assert [e.seq for e in events] == [1, 2, 3]
    assert not process.killed


async def test_it_refuses_a_sequence_number_that_skips():
    await assert_protocol_error(log(1), log(3), why="event number 3 where 2 was due")


async def test_it_refuses_a_duplicate_or_negative_sequence_number():
    await assert_protocol_error(log(1), log(1), why="event number 1 where 2 was due")
    await assert_protocol_error(log(-5), why="bad seq")


async def test_it_refuses_a_forged_sequence_number_near_two_to_the_63():
    await assert_protocol_error(log(1), log(2**63 - 1), why="outside")


async def test_it_refuses_a_second_exit_and_anything_after_exit():
    exit_line = line(2, "exit", {"outcome": "result"})
    await assert_protocol_error(log(1) + exit_line + line(3, "exit", {"outcome": "result"}),
                                why="after the exit event")  # fmt: skip
    await assert_protocol_error(log(1) + exit_line + log(3), why="after the exit event")


async def test_it_refuses_a_second_result():
    await assert_protocol_error(line(1, "result", 1), line(2, "result", 2), why="second result")


async def test_it_refuses_data_nested_deeper_than_the_bound():
    deep = b"[" * 950 + b"1" + b"]" * 950
    await assert_protocol_error(b'{"seq":1,"type":"result","data":' + deep + b',"ts":1}\n',
                                why="nested deeper than 64")  # fmt: skip


async def test_it_refuses_integers_outside_the_json_safe_range():
    await assert_protocol_error(line(1, "result", MAX_SAFE_INT + 1), why="outside")
    huge = b'{"seq":1,"type":"result","data":' + b"9" * 5000 + b',"ts":1}\n'
    await assert_protocol_error(huge, why="outside")


async def test_it_refuses_lone_surrogates_and_invalid_utf8():
    await assert_protocol_error(line(1, "result", "\ud800"), why="lone surrogate")
    await assert_protocol_error(b'{"seq":1,"type":"log","data":{"message":"\xff"},"ts":1}\n',
                                why="not UTF-8")  # fmt: skip


async def test_it_refuses_non_finite_numbers():
    await assert_protocol_error(b'{"seq":1,"type":"result","data":NaN,"ts":1}\n', why="finite")
    await assert_protocol_error(b'{"seq":1,"type":"result","data":1e999,"ts":1}\n', why="finite")


async def test_it_refuses_unknown_types_and_fields():
    await assert_protocol_error(line(1, "ready", {}), why="unknown event type")
    extra = b'{"seq":1,"type":"log","data":{"message":"x"},"ts":1,"x":1}\n'
    await assert_protocol_error(extra, why="unknown event fields")


async def test_it_refuses_an_exit_claiming_an_outcome_only_the_runner_decides():
    await assert_protocol_error(line(1, "exit", {"outcome": "timeout"}), why="may only claim")


async def test_it_refuses_an_endless_line():
    await assert_protocol_error(b"x" * (9 * 1024 * 1024), why="longer than")


def test_parse_event_refuses_hostile_lines_with_a_protocol_error():
    for hostile in ("[" * 100_000, '{"seq":1,"type":"log","data":' + "[" * 5000, "\x00", "{}"):
        with pytest.raises(ProtocolError):
            parse_event(hostile)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=40,
)


@st.composite
def hostile_line(draw: st.DrawFn) -> bytes:
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return draw(st.binary(max_size=300))
    if kind == 1:
        depth = draw(st.integers(0, 3000))
        return b'{"seq":1,"type":"result","data":' + b"[" * depth + b"]" * depth + b',"ts":1}'
    if kind == 2:
        return b'{"seq":1,"type":"log","data":{"message":"' + draw(st.binary(max_size=50)) + b'"}}'
    event = {
        "seq": draw(st.integers() | st.just(1) | json_values),
        "type": draw(st.sampled_from(["log", "intermediate", "result", "error", "exit", "x"])),
        "data": draw(json_values),
        "ts": draw(st.floats() | st.integers() | st.just(1.0)),
    }
    try:
        return json.dumps(event).encode("utf-8", "surrogatepass")
    except (ValueError, OverflowError):
        return b"{}"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(hostile_line(), max_size=6), st.booleans())
async def test_no_hostile_stream_crashes_the_driver_and_every_run_ends_exactly_once(
    lines: list[bytes], split: bool
):
    blob = b"\n".join(lines) + b"\n"
    chunks = [blob[i : i + 7] for i in range(0, len(blob), 7)] if split else [blob]
    events = await collect(drive(FakeProcess(chunks, exit_code=1), RunRequest(script="x"),
                                 LIMITS))  # fmt: skip
    end = final(events)
    assert end.outcome in set(Outcome)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert len(of_type(events, "result")) <= 1
