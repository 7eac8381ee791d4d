"""Drive one run on any backend: send the request, stream events, enforce time and output caps.

A backend only has to provide a `Process`: something to write the request to, read output
chunks from, kill, and ask how it ended. Every path out of `drive` ends with exactly one
`exit` event whose `outcome` is one of `Outcome`.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from .events import (
    MAX_LINE_BYTES,
    Event,
    Outcome,
    ProtocolError,
    error_data,
    exit_data,
    memory_message,
    parse_event,
)
from .request import RunLimits, RunRequest
from .streams import CappedReader, Chunk, OutputLimited, TimedOut


@dataclass(frozen=True)
class ExitInfo:
    """How the sandbox process ended, as far as the backend can tell."""

    exit_code: int | None
    oom_killed: bool = False


class Process(Protocol):
    """One started sandbox whose harness announced readiness and waits for a request."""

    backend: str

    async def write(self, data: bytes) -> None:
        """Send bytes to the harness's stdin."""

    async def read(self) -> Chunk | None:
        """Return the next output chunk, or None once both streams are closed."""

    async def kill(self) -> None:
        """Stop the sandbox now."""

    async def wait(self) -> ExitInfo:
        """Wait for the sandbox to end and say how."""


class _Ended(Exception):
    """Internal: the run is over for the runner's reason."""

    def __init__(self, outcome: Outcome, message: str) -> None:
        self.outcome = outcome
        self.message = message


class RunState:
    """Sequence numbers and the final outcome of one run."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.last_seq = 0
        self.has_result = False
        self.started = time.monotonic()

    def event(self, type_: str, data: object) -> Event:
        """Make a runner-side event numbered after the harness's events."""
        self.last_seq += 1
        return Event(seq=self.last_seq, type=type_, data=data)  # type: ignore[arg-type]

    def final(self, outcome: Outcome, message: str, **extra: object) -> Event:
        """Make the one `exit` event that ends the run."""
        duration_ms = round((time.monotonic() - self.started) * 1000, 1)
        data = exit_data(outcome, message, backend=self.backend, duration_ms=duration_ms, **extra)
        return self.event("exit", data)


_RESULT_MESSAGES = {
    Outcome.RESULT: "the script emitted its result",
    Outcome.SCRIPT_ERROR: "the script failed",
}


# How long a result waits for the run's end to come with it. A result is nearly always the
# script's last act, and the harness's `exit` follows it within a millisecond (the time its
# script process takes to end). Handed on together, the two are stored in one transaction and
# sent in one message: the run's end is then known as soon as its result, instead of a whole
# store and send later. A script that goes on after its result delays the result by this much.
RESULT_GRACE_SECONDS = 0.003


async def drive(process: Process, request: RunRequest, limits: RunLimits) -> AsyncIterator[Event]:
    """Run one request on a ready process and yield its events as they arrive."""
    state = RunState(process.backend)
    reader = _Lookahead(
        CappedReader(
            process.read,
            deadline=state.started + limits.timeout_seconds,
            max_bytes=limits.max_output_bytes,
        ),
        limits,
    )
    # The unfinished line so far. A bytearray, split only when a chunk brings a newline: a
    # split (or a bytes concatenation) per chunk rescans all of it, so an 8 MiB line in the
    # engine's 32 KiB frames cost the host seconds of CPU instead of milliseconds.
    pending = bytearray()
    stderr_tail: deque[str] = deque(maxlen=20)
    held: Event | None = None  # a result waiting for the run's end (RESULT_GRACE_SECONDS)
    held_until = 0.0
    try:
        await process.write(request.to_line(limits.timeout_seconds))
        while True:
            if held is None:
                item = await reader.next()
            else:
                item = await reader.next(within=held_until - time.monotonic())
                if item is _LATER:
                    held, event = None, held
                    yield event
                    continue
            if item is None:
                break
            assert not isinstance(item, _Later)
            stream, chunk = item
            if stream == "stderr":
                # Each kept line cut short: a "line" is up to a whole 32 KiB frame, and twenty
                # of them made a crash message of 600 KB (stored twice, read by the retry).
                stderr_tail.extend(
                    _cut_line(text) for text in chunk.decode("utf-8", "replace").splitlines()
                )
                continue
            pending += chunk
            if b"\n" not in chunk:
                if len(pending) > MAX_LINE_BYTES:
                    raise _protocol(f"a line longer than {MAX_LINE_BYTES} bytes")
                continue
            *lines, rest = bytes(pending).split(b"\n")
            pending = bytearray(rest)
            if len(pending) > MAX_LINE_BYTES:
                raise _protocol(f"a line longer than {MAX_LINE_BYTES} bytes")
            for index, line in enumerate(lines):
                if not line.strip():
                    continue
                event = _parse(line, state)
                if held is not None:
                    held, result = None, held
                    yield result
                if event.type == "exit":
                    if any(rest.strip() for rest in lines[index + 1 :]) or pending.strip():
                        raise _protocol("output after the exit event")
                    # The harness is done and exits on its own: end the run now rather than
                    # wait for the engine to notice (the caller removes the sandbox after).
                    outcome = _harness_outcome(event)
                    yield state.final(outcome, _RESULT_MESSAGES[outcome])
                    return
                if event.seq > limits.max_events:  # numbered after the last one kept
                    raise _Ended(Outcome.OUTPUT_LIMIT, _events_message(limits))
                state.last_seq = event.seq
                if event.type == "result" and not any(r.strip() for r in lines[index + 1 :]):
                    held, held_until = event, time.monotonic() + RESULT_GRACE_SECONDS
                    continue
                yield event
    except _Ended as ended:
        if held is not None:
            yield held
        await process.kill()
        yield state.event("error", error_data(ended.outcome, ended.message))
        yield state.final(ended.outcome, ended.message)
        return
    except (OSError, ConnectionError) as exc:
        if held is not None:
            yield held
        await process.kill()
        message = f"lost the connection to the sandbox: {exc}"
        yield state.event("error", error_data(Outcome.CONTAINER_CRASH, message))
        yield state.final(Outcome.CONTAINER_CRASH, message)
        return
    finally:
        await reader.close()
    if held is not None:
        yield held

    info = await process.wait()
    if info.oom_killed:
        message = memory_message(limits.memory_mb)
        yield state.event("error", error_data(Outcome.MEMORY_KILLED, message))
        yield state.final(Outcome.MEMORY_KILLED, message, exit_code=info.exit_code)
        return
    message = f"the sandbox ended without finishing the run (exit code {info.exit_code})"
    if stderr_tail:
        message += ":\n" + "\n".join(stderr_tail)
    data = error_data(Outcome.CONTAINER_CRASH, message, exit_code=info.exit_code)
    yield state.event("error", data)
    yield state.final(Outcome.CONTAINER_CRASH, message, exit_code=info.exit_code)


class _Later:
    """The next chunk did not come within the time asked for (it is still awaited)."""


_LATER = _Later()


class _Lookahead:
    """Read chunks one at a time, and wait for the next one no longer than asked.

    A read that takes longer than asked is kept, not cancelled: cutting a read of the
    sandbox's stream in the middle could lose what it had read so far.
    """

    def __init__(self, reader: CappedReader, limits: RunLimits) -> None:
        self._reader = reader
        self._limits = limits
        self._task: asyncio.Task[Chunk | None] | None = None

    async def next(self, *, within: float | None = None) -> Chunk | _Later | None:
        """Return the next chunk (None at the end), or `_LATER` if it is not there `within`."""
        if self._task is None and within is None:
            return await _next(self._reader, self._limits)  # no task: the path of every chunk
        if self._task is None:
            self._task = asyncio.ensure_future(_next(self._reader, self._limits))
        if within is not None:
            done, _ = await asyncio.wait({self._task}, timeout=max(within, 0.0))
            if not done:
                return _LATER
        task, self._task = self._task, None
        return await task

    async def close(self) -> None:
        """Stop a read still in progress (the run is over) and wait until it stopped."""
        task, self._task = self._task, None
        if task is not None and task.cancel():
            await asyncio.wait({task})  # a cancel of the run itself still propagates


async def _next(reader: CappedReader, limits: RunLimits) -> Chunk | None:
    """Return the next output chunk; past the wall clock or the output cap, end the run."""
    try:
        return await reader.read()
    except TimedOut:
        raise _Ended(Outcome.TIMEOUT, _timeout_message(limits)) from None
    except OutputLimited:
        raise _Ended(
            Outcome.OUTPUT_LIMIT,
            f"output limit of {limits.max_output_bytes} bytes reached: the run was cut "
            "and the sandbox stopped",
        ) from None


def _protocol(why: str) -> _Ended:
    return _Ended(
        Outcome.PROTOCOL_ERROR, f"protocol error: the sandbox sent {why}; the run was stopped"
    )


def _parse(line: bytes, state: RunState) -> Event:
    """Parse a protocol line and check it against the run so far; refuse anything else."""
    try:
        event = parse_event(line)
    except (ProtocolError, ValueError, TypeError, RecursionError) as exc:
        raise _protocol(f"a malformed event ({exc})") from None
    if event.seq != state.last_seq + 1:
        raise _protocol(f"event number {event.seq} where {state.last_seq + 1} was due")
    if event.type == "result":
        if state.has_result:
            raise _protocol("a second result")
        state.has_result = True
    return event


def _harness_outcome(event: Event) -> Outcome:
    """Read the outcome the harness reported; it may only claim result or script error."""
    data = event.data if isinstance(event.data, dict) else {}
    if data.get("outcome") == Outcome.RESULT.value:
        return Outcome.RESULT
    return Outcome.SCRIPT_ERROR


STDERR_LINE_CHARS = 500


def _cut_line(text: str) -> str:
    """Return a stderr line cut to `STDERR_LINE_CHARS`, saying so."""
    if len(text) <= STDERR_LINE_CHARS:
        return text
    return f"{text[:STDERR_LINE_CHARS]}... ({len(text) - STDERR_LINE_CHARS} more characters cut)"


def _events_message(limits: RunLimits) -> str:
    return (
        f"event limit of {limits.max_events} events reached: the run was cut and the sandbox "
        "stopped"
    )


def _timeout_message(limits: RunLimits) -> str:
    return f"timed out after {limits.timeout_seconds:g} s: the sandbox was killed"


def engine_unavailable(backend: str, message: str) -> list[Event]:
    """Return the two events that end a run that could not start on its engine."""
    state = RunState(backend)
    return [
        state.event("error", error_data(Outcome.ENGINE_UNAVAILABLE, message)),
        state.final(Outcome.ENGINE_UNAVAILABLE, message),
    ]
