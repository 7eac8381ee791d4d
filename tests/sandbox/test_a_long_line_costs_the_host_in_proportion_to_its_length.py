"""A long event line costs the host time in proportion to its length, not to its square.

The harness sends a log text as events of up to 8 MiB each (a character beyond the BMP is 12
bytes of ASCII JSON), and the engine hands each one over in frames of about 32 KiB. Splitting
everything kept so far at every frame rescanned the line hundreds of times: six such lines (a
validator-approved `emit_log` of four million emoji) took the host over five seconds of CPU,
ten times what the same bytes cost in short lines.
"""

from __future__ import annotations

import dataclasses
import json
import time

import pytest

from jazzmine.core.tools import validate_script
from jazzmine.sandbox import Outcome, RunLimits, RunRequest
from jazzmine.sandbox.containers import run_one_shot
from jazzmine.sandbox.events import MAX_LINE_BYTES
from jazzmine.sandbox.pool import WarmPool
from jazzmine.sandbox.session import ExitInfo, drive

from .helpers import collect, final, of_type

EMOJI_LOG = "emit_log('\\U0001F600' * 2_000_000)\nemit_result(1)\n"


class ChunkedProcess:
    """A sandbox that says the bytes a test gives it in small chunks, then ends."""

    backend = "fake"

    def __init__(self, data: bytes, size: int) -> None:
        self.data = memoryview(data)
        self.size = size
        self.killed = False

    async def write(self, data: bytes) -> None:
        pass

    async def read(self) -> tuple[str, bytes] | None:
        if self.killed or not self.data:
            return None
        chunk, self.data = bytes(self.data[: self.size]), self.data[self.size :]
        return "stdout", chunk

    async def kill(self) -> None:
        self.killed = True

    async def wait(self) -> ExitInfo:
        return ExitInfo(exit_code=0)


def event_line(seq: int, type_: str, data: object) -> bytes:
    return json.dumps({"seq": seq, "type": type_, "data": data, "ts": 1.0}).encode() + b"\n"


async def test_a_line_near_the_bound_in_small_chunks_is_read_in_linear_time() -> None:
    message = "x" * (MAX_LINE_BYTES - 1024)
    data = (
        event_line(1, "log", {"message": message, "stream": "emit_log"})
        + event_line(2, "result", 1)
        + event_line(3, "exit", {"outcome": "result"})
    )
    limits = RunLimits(timeout_seconds=60, max_output_bytes=2 * MAX_LINE_BYTES)
    started = time.process_time()
    events = await collect(drive(ChunkedProcess(data, 4096), RunRequest(script="x"), limits))
    spent = time.process_time() - started
    assert final(events).outcome is Outcome.RESULT, final(events)
    assert of_type(events, "log")[0].data["message"] == message
    # Linear: a few tens of milliseconds. A split per chunk scanned 8 GB (seconds).
    assert spent < 1.0, f"{spent:.2f} s of CPU for one {len(data)}-byte line"


def test_the_script_passes_the_validator() -> None:
    assert validate_script(EMOJI_LOG, []) == []


@pytest.mark.docker
async def test_a_script_logging_lines_of_eight_mib_costs_the_host_little_cpu(
    runner, image, limits
) -> None:
    roomy = dataclasses.replace(limits, max_output_bytes=40_000_000, memory_mb=256)
    async with WarmPool(runner, image, roomy, size=1) as pool:
        started = time.process_time()
        events = await collect(pool.run(RunRequest(script=EMOJI_LOG)))
        spent = time.process_time() - started
    assert final(events).outcome is Outcome.RESULT, final(events)
    logs = of_type(events, "log")
    assert len(logs) == 3  # three lines of about 8 MiB each
    assert "".join(e.data["message"] for e in logs) == "\U0001f600" * 2_000_000
    # About 0.3 s when linear; the per-frame split took about 2.5 s for these 24 MB.
    assert spent < 1.2, f"{spent:.2f} s of host CPU for {sum(len(e.to_json()) for e in logs)} B"


@pytest.mark.docker
async def test_a_one_shot_containers_long_stdout_lines_cost_the_host_little_cpu(
    docker_client, base_image
) -> None:
    # The bash sandbox reads its runner's JSON lines this way (`on_stdout_line`).
    lengths: list[int] = []
    command = "import sys\nfor i in range(3): sys.stdout.write('x' * 8_000_000 + '\\n')"
    started = time.process_time()
    result = await run_one_shot(
        base_image,
        ["python3", "-c", command],
        stdin=b"",
        limits=RunLimits(max_output_bytes=40_000_000, memory_mb=256),
        timeout_seconds=30,
        on_stdout_line=lambda line: lengths.append(len(line)),
        client=docker_client,
    )
    spent = time.process_time() - started
    assert result.exit_code == 0, result
    assert lengths == [8_000_000] * 3
    # About 0.3 s when linear; the per-frame split took about 3 s for these 24 MB.
    assert spent < 1.2, f"{spent:.2f} s of host CPU"
