"""The self-correcting loop: prompt the LLM, validate its script, run it, retry with the error.

Framework-independent: the caller injects how a script runs (a sandbox, a review queue, a fake
in tests) and where progress goes (`on_event`, e.g. a websocket group). Each attempt is kept
whole, prompt to outcome, so attempts can be compared later.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

import httpx

from jazzmine.core.tools.generator import ScriptGenerator, body_numbered, retry_hint
from jazzmine.core.tools.validator import MAX_SCRIPT_CHARS
from jazzmine.llm.client import stream_chat
from jazzmine.llm.config import LLMConfig
from jazzmine.llm.errors import LLMEmptyAnswerError, LLMError
from jazzmine.llm.types import Finish, TextDelta

logger = logging.getLogger(__name__)

# What an answer may hold besides its script: a fence and a sentence or two around it.
ANSWER_ALLOWANCE_CHARS = 8_000


@dataclass(frozen=True)
class RunOutcome:
    """What running a script gave: a result, or the error text the next prompt will quote."""

    success: bool
    result: Any = None
    error: str | None = None
    # The caller's handle on the run (a Run row id, a review id) for linking attempts to it.
    ref: str | None = None
    # Why the caller did not run the script at all and stopped the loop there: it waits for a
    # person (it calls tools nobody may run unread). Never quoted to the LLM as an error.
    held: str | None = None


AttemptStatus = Literal["succeeded", "failed", "invalid", "llm_error", "held"]


@dataclass
class Attempt:
    """One pass of the loop: what was asked, what came back, and what became of it."""

    number: int
    prompt: str
    hint: str = ""
    raw_answer: str = ""
    body: str = ""
    script: str = ""
    violations: list[str] = field(default_factory=list)
    outcome: RunOutcome | None = None
    # Why the LLM gave no usable answer (connection, auth...), when it did not.
    llm_error: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    generation_seconds: float = 0.0
    first_token_seconds: float | None = None
    run_seconds: float | None = None

    @property
    def status(self) -> AttemptStatus:
        """Return how the attempt ended."""
        if self.llm_error is not None:
            return "llm_error"
        if self.violations:
            return "invalid"
        if self.outcome is not None and self.outcome.success:
            return "succeeded"
        if self.outcome is not None and self.outcome.held:
            return "held"
        return "failed"

    @property
    def succeeded(self) -> bool:
        """Tell whether the script ran and succeeded."""
        return self.status == "succeeded"

    @property
    def error(self) -> str | None:
        """Return the error the next attempt's prompt quotes, or None."""
        if self.llm_error is not None:
            return self.llm_error
        if self.violations:
            return ScriptGenerator.validation_error_message(self.violations)
        if self.outcome is not None and not self.outcome.success and not self.outcome.held:
            return self.outcome.error or "The script failed without an error message."
        return None


# --- events ---------------------------------------------------------------------------------


class AttemptStartedEvent(TypedDict):
    type: Literal["attempt_started"]
    attempt: int
    prompt: str
    hint: str


class TokenEvent(TypedDict):
    type: Literal["token"]
    attempt: int
    text: str


class GeneratedEvent(TypedDict):
    type: Literal["generated"]
    attempt: int
    body: str
    script: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    seconds: float
    first_token_seconds: float | None


class LLMErrorEvent(TypedDict):
    type: Literal["llm_error"]
    attempt: int
    error: str


class ValidatedEvent(TypedDict):
    type: Literal["validated"]
    attempt: int
    violations: list[str]


class RunStartedEvent(TypedDict):
    type: Literal["run_started"]
    attempt: int


class RunFinishedEvent(TypedDict):
    type: Literal["run_finished"]
    attempt: int
    success: bool
    result: Any
    error: str | None
    seconds: float


class HeldEvent(TypedDict):
    type: Literal["held"]
    attempt: int
    reason: str


class FinishedEvent(TypedDict):
    type: Literal["finished"]
    success: bool
    attempts: int


Event = (
    AttemptStartedEvent
    | TokenEvent
    | GeneratedEvent
    | LLMErrorEvent
    | ValidatedEvent
    | RunStartedEvent
    | RunFinishedEvent
    | HeldEvent
    | FinishedEvent
)
OnEvent = Callable[[Event], Awaitable[None] | None]
Run = Callable[[str], Awaitable[RunOutcome]]


# --- the loop -------------------------------------------------------------------------------


async def generate_attempt(
    task: str,
    sandbox_name: str,
    *,
    generator: ScriptGenerator,
    llm: LLMConfig,
    number: int = 1,
    previous_script: str | None = None,
    previous_error: str | None = None,
    on_event: OnEvent | None = None,
    client: httpx.AsyncClient | None = None,
) -> Attempt:
    """Prompt the LLM for one attempt and validate its script, without running it."""
    emit = _emitter(on_event)
    prompt = generator.build_prompt(task, sandbox_name, previous_script, previous_error, number)
    attempt = Attempt(
        number=number, prompt=prompt, hint=retry_hint(previous_error) if number > 1 else ""
    )
    await emit(
        AttemptStartedEvent(
            type="attempt_started", attempt=number, prompt=prompt, hint=attempt.hint
        )
    )

    started = time.perf_counter()
    parts: list[str] = []
    limit = answer_limit(generator)
    received = 0
    stream = stream_chat(llm, [{"role": "user", "content": prompt}], client=client)
    try:
        # Closed as soon as the loop stops reading: a cut-off answer's connection goes at once.
        async with aclosing(stream):
            async for chunk in stream:
                if isinstance(chunk, TextDelta):
                    received += len(chunk.text)
                    if received > limit:
                        break  # no script is that long: read no more of it (see `_too_long`)
                    if attempt.first_token_seconds is None:
                        attempt.first_token_seconds = time.perf_counter() - started
                    parts.append(chunk.text)
                    await emit(TokenEvent(type="token", attempt=number, text=chunk.text))
                elif isinstance(chunk, Finish):
                    attempt.finish_reason = chunk.finish_reason
                    if chunk.usage is not None:
                        attempt.prompt_tokens = chunk.usage.prompt_tokens
                        attempt.completion_tokens = chunk.usage.completion_tokens
    except LLMEmptyAnswerError as exc:
        # An empty answer is a bad script, not a broken endpoint: the validator's "no emit call"
        # feeds the retry, as the seed does.
        attempt.finish_reason = exc.finish_reason
    except LLMError as exc:
        attempt.generation_seconds = time.perf_counter() - started
        attempt.raw_answer = "".join(parts)  # what arrived before the failure, for the record
        attempt.llm_error = str(exc)
        await emit(LLMErrorEvent(type="llm_error", attempt=number, error=attempt.llm_error))
        return attempt
    attempt.generation_seconds = time.perf_counter() - started

    attempt.raw_answer = "".join(parts)
    if received > limit:
        # Nothing is made of it: finding its script means parsing it, which holds the GIL of
        # the caller's process (a web server's, with every socket on it) for seconds.
        attempt.violations = [_too_long(limit, generator)]
    else:
        # Off the caller's event loop: an answer can be made slow to read (a bash check runs
        # one bashkit analysis per nested substitution), and the loop serves other sockets.
        attempt.body, attempt.script, attempt.violations = await asyncio.to_thread(
            _read_answer, generator, attempt.raw_answer, sandbox_name
        )
    await emit(
        GeneratedEvent(
            type="generated",
            attempt=number,
            body=attempt.body,
            script=attempt.script,
            finish_reason=attempt.finish_reason,
            prompt_tokens=attempt.prompt_tokens,
            completion_tokens=attempt.completion_tokens,
            seconds=attempt.generation_seconds,
            first_token_seconds=attempt.first_token_seconds,
        )
    )
    await emit(
        ValidatedEvent(type="validated", attempt=number, violations=list(attempt.violations))
    )
    return attempt


async def solve(
    task: str,
    sandbox_name: str,
    *,
    generator: ScriptGenerator,
    llm: LLMConfig,
    run: Run,
    max_attempts: int = 3,
    on_event: OnEvent | None = None,
    first_attempt: int = 1,
    previous_script: str | None = None,
    previous_error: str | None = None,
    client: httpx.AsyncClient | None = None,
) -> list[Attempt]:
    """Generate, validate and run up to `max_attempts` scripts; stop at the first success.

    A script with violations is never run: its violations are the next prompt's error. An
    LLM that cannot be reached ends the loop (asking again would fail the same way). Errors
    raised by `run` itself are the caller's infrastructure failing and propagate; a script
    that fails returns `RunOutcome(success=False, error=...)`; one `run` would not start
    returns `RunOutcome(success=False, held=why)`, which ends the loop there. `first_attempt`
    and the `previous_*` arguments continue an earlier session (the playground's Retry button).
    """
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be at least 1, not {max_attempts}")
    emit = _emitter(on_event)
    attempts: list[Attempt] = []
    for number in range(first_attempt, first_attempt + max_attempts):
        attempt = await generate_attempt(
            task,
            sandbox_name,
            generator=generator,
            llm=llm,
            number=number,
            previous_script=previous_script,
            previous_error=previous_error,
            on_event=on_event,
            client=client,
        )
        attempts.append(attempt)
        if attempt.llm_error is not None:
            break
        if not attempt.violations:
            await emit(RunStartedEvent(type="run_started", attempt=number))
            started = time.perf_counter()
            attempt.outcome = await run(attempt.script)
            attempt.run_seconds = time.perf_counter() - started
            if attempt.outcome.held:
                # Not run: the script is the person's to read and run. Nothing to retry on.
                await emit(HeldEvent(type="held", attempt=number, reason=attempt.outcome.held))
                break
            await emit(
                RunFinishedEvent(
                    type="run_finished",
                    attempt=number,
                    success=attempt.outcome.success,
                    result=attempt.outcome.result,
                    error=attempt.outcome.error,
                    seconds=attempt.run_seconds,
                )
            )
            if attempt.outcome.success:
                break
        logger.info("attempt %d for sandbox %s: %s", number, sandbox_name, attempt.status)
        previous_script, previous_error = attempt.body, attempt.error
    success = bool(attempts) and attempts[-1].succeeded
    await emit(FinishedEvent(type="finished", success=success, attempts=len(attempts)))
    return attempts


def _read_answer(generator: Any, answer: str, sandbox_name: str) -> tuple[str, str, list[str]]:
    """Return an answer's body, the script it assembles to, and that script's violations."""
    body = generator.answer_body(answer)
    script = generator.assemble_script(body, sandbox_name)
    violations = generator.validate(script, sandbox_name)
    # Numbered by body line: the page, the stored attempt and the next prompt quote the body.
    return body, script, body_numbered(violations, generator.body_line_offset(script))


def answer_limit(generator: Any) -> int:
    """Return the most characters of an answer the loop reads: the longest script, and a bit.

    A bash generator says its own limit (`max_chars`); Python scripts have the validator's.
    """
    return _script_limit(generator) + ANSWER_ALLOWANCE_CHARS


def _script_limit(generator: Any) -> int:
    limit = getattr(generator, "max_chars", None)
    return limit if isinstance(limit, int) and limit > 0 else MAX_SCRIPT_CHARS


def _too_long(limit: int, generator: Any) -> str:
    """Word the violation of an answer cut off at `limit` characters, for the retry prompt."""
    return (
        f"Line 1: the answer is more than {limit} characters long, and a script may be at most "
        f"{_script_limit(generator)}; it was not read further. Write a shorter script that lets "
        "the tools do the heavy work."
    )


def _emitter(on_event: OnEvent | None) -> Callable[[Event], Awaitable[None]]:
    """Return an awaitable sender that accepts sync or async callbacks, or drops events."""

    async def emit(event: Event) -> None:
        if on_event is not None:
            result = on_event(event)
            if inspect.isawaitable(result):
                await result

    return emit
