"""The self-correcting loop against the fake LLM server, with a fake `run`."""

from __future__ import annotations

from typing import Any

import pytest

from jazzmine.core.tools import ScriptGenerator
from jazzmine.core.tools.prompts import VIOLATION_HINT
from jazzmine.llm import LLMConfig
from jazzmine.llm.fake.server import FakeLLMServer, Reply
from jazzmine.orchestrator import Attempt, Event, RunOutcome, generate_attempt, solve

from .conftest import loopback_config

TASK = "Show the first order of user 7"
GOOD = 'r = get_orders(user_id="7")\nemit_result(r.data)\n'
KEY_ERROR = (
    'Traceback (most recent call last):\n  File "script.py", line 10, in <module>\nKeyError: 0'
)


class FakeRun:
    """Fail with KeyError: 0 while a script indexes `r.data[0]`; succeed otherwise."""

    def __init__(self, outcomes: list[RunOutcome] | None = None) -> None:
        self.scripts: list[str] = []
        self.outcomes = outcomes

    async def __call__(self, script: str) -> RunOutcome:
        self.scripts.append(script)
        if self.outcomes is not None:
            return self.outcomes[len(self.scripts) - 1]
        if "r.data[0]" in script:
            return RunOutcome(success=False, error=KEY_ERROR, ref=f"run-{len(self.scripts)}")
        return RunOutcome(success=True, result={"first": {"id": 1}}, ref=f"run-{len(self.scripts)}")


async def test_a_key_error_on_the_first_attempt_is_fixed_by_the_retry(
    server: FakeLLMServer, config: LLMConfig, generator: ScriptGenerator
) -> None:
    run = FakeRun()
    attempts = await solve(TASK, "shop", generator=generator, llm=config, run=run)

    assert [a.status for a in attempts] == ["failed", "succeeded"]
    first, second = attempts
    assert "r.data[0]" in first.body
    assert first.outcome == RunOutcome(success=False, error=KEY_ERROR, ref="run-1")
    assert first.hint == ""
    # The retry prompt quotes the previous script, its error, and the KeyError hint.
    assert second.number == 2
    assert first.body.strip() in second.prompt
    assert KEY_ERROR in second.prompt
    assert "KeyError: 0` means you indexed `r.data` with an integer" in second.prompt
    assert "with an integer" in second.hint
    assert server.requests[1].prompt == second.prompt
    assert second.outcome is not None and second.outcome.result == {"first": {"id": 1}}
    assert run.scripts == [first.script, second.script]


async def test_each_attempt_keeps_its_timings_tokens_and_answer(
    server: FakeLLMServer, config: LLMConfig, generator: ScriptGenerator
) -> None:
    server.script("```python\n" + GOOD + "```\n")
    [attempt] = await solve(TASK, "shop", generator=generator, llm=config, run=FakeRun())
    assert attempt.raw_answer.startswith("```python")
    assert attempt.body == GOOD.rstrip("\n")
    assert attempt.script == generator.assemble_script(GOOD, "shop")
    assert attempt.finish_reason == "stop"
    assert attempt.prompt_tokens and attempt.prompt_tokens > 100
    assert attempt.completion_tokens and attempt.completion_tokens > 3
    assert attempt.generation_seconds > 0
    assert attempt.first_token_seconds is not None
    assert attempt.first_token_seconds <= attempt.generation_seconds
    assert attempt.run_seconds is not None and attempt.run_seconds >= 0


async def test_a_script_with_violations_never_reaches_run(
    server: FakeLLMServer, config: LLMConfig, generator: ScriptGenerator
) -> None:
    server.script('data = open("/etc/passwd").read()\nemit_result(data)\n', GOOD)
    run = FakeRun()
    attempts = await solve(TASK, "shop", generator=generator, llm=config, run=run)

    assert [a.status for a in attempts] == ["invalid", "succeeded"]
    assert attempts[0].outcome is None
    assert attempts[0].run_seconds is None
    assert any("open" in v for v in attempts[0].violations)
    assert run.scripts == [attempts[1].script]
    # The violations are the next attempt's error, with the rule-breaking hint.
    assert ScriptGenerator.validation_error_message(attempts[0].violations) in attempts[1].prompt
    assert attempts[1].hint == VIOLATION_HINT


async def test_violations_are_numbered_by_the_line_of_the_body(
    server: FakeLLMServer, config: LLMConfig, generator: ScriptGenerator
) -> None:
    # `open` is on line 3 of what the LLM wrote; the assembled script has a preamble before it.
    server.script('x = 1\ny = 2\nf = open("x")\nemit_result(1)', GOOD)
    attempts = await solve(TASK, "shop", generator=generator, llm=config, run=FakeRun())
    (violation,) = [v for v in attempts[0].violations if "open" in v]
    assert violation.startswith("Line 3:"), violation
    assert "Line 3:" in attempts[1].prompt


async def test_it_gives_up_after_max_attempts(
    server: FakeLLMServer, config: LLMConfig, generator: ScriptGenerator
) -> None:
    failing = [RunOutcome(success=False, error=f"ValueError: try {n}") for n in (1, 2, 3)]
    run = FakeRun(failing)
    attempts = await solve(
        "List orders of user 7", "shop", generator=generator, llm=config, run=run, max_attempts=2
    )
    assert [a.number for a in attempts] == [1, 2]
    assert [a.status for a in attempts] == ["failed", "failed"]
    assert len(server.requests) == 2
    assert len(run.scripts) == 2
    assert "ValueError: try 1" in attempts[1].prompt


async def test_it_stops_at_the_first_success(
    server: FakeLLMServer, config: LLMConfig, generator: ScriptGenerator
) -> None:
    attempts = await solve(
        "List orders of user 7", "shop", generator=generator, llm=config, run=FakeRun()
    )
    assert [a.status for a in attempts] == ["succeeded"]
    assert len(server.requests) == 1


async def test_an_empty_answer_is_retried_as_an_unproductive_script(
    server: FakeLLMServer, config: LLMConfig, generator: ScriptGenerator
) -> None:
    server.script("", GOOD)
    attempts = await solve(TASK, "shop", generator=generator, llm=config, run=FakeRun())
    assert [a.status for a in attempts] == ["invalid", "succeeded"]
    assert attempts[0].raw_answer == ""
    assert attempts[0].violations


async def test_an_unreachable_llm_ends_the_loop_with_its_error(
    closed_port: int, generator: ScriptGenerator
) -> None:
    config = loopback_config(f"http://127.0.0.1:{closed_port}/v1", model="m")
    run = FakeRun()
    attempts = await solve(TASK, "shop", generator=generator, llm=config, run=run)
    assert [a.status for a in attempts] == ["llm_error"]
    assert attempts[0].llm_error is not None and "connection refused" in attempts[0].llm_error
    assert run.scripts == []


async def test_a_refused_key_ends_the_loop_with_its_error(generator: ScriptGenerator) -> None:
    async with FakeLLMServer(api_key="good") as server:
        config = loopback_config(server.base_url, api_key="bad", model="jazzmine-fake")
        [attempt] = await solve(TASK, "shop", generator=generator, llm=config, run=FakeRun())
    assert attempt.status == "llm_error"
    assert "API key was refused" in (attempt.error or "")


async def test_events_tell_the_whole_story_in_order(
    server: FakeLLMServer, config: LLMConfig, generator: ScriptGenerator
) -> None:
    events: list[Event] = []
    attempts = await solve(
        TASK, "shop", generator=generator, llm=config, run=FakeRun(), on_event=events.append
    )
    kinds = [e["type"] for e in events if e["type"] != "token"]
    assert kinds == [
        "attempt_started",
        "generated",
        "validated",
        "run_started",
        "run_finished",
        "attempt_started",
        "generated",
        "validated",
        "run_started",
        "run_finished",
        "finished",
    ]
    for attempt in attempts:
        tokens = [e for e in events if e["type"] == "token" and e["attempt"] == attempt.number]
        assert len(tokens) > 5
        assert "".join(t["text"] for t in tokens) == attempt.raw_answer
    assert events[-1] == {"type": "finished", "success": True, "attempts": 2}


async def test_an_async_event_callback_is_awaited(
    server: FakeLLMServer, config: LLMConfig, generator: ScriptGenerator
) -> None:
    seen: list[str] = []

    async def on_event(event: Event) -> None:
        seen.append(event["type"])

    server.script(GOOD)
    await solve(TASK, "shop", generator=generator, llm=config, run=FakeRun(), on_event=on_event)
    assert seen[0] == "attempt_started" and seen[-1] == "finished"


async def test_a_session_can_continue_from_a_later_attempt(
    server: FakeLLMServer, config: LLMConfig, generator: ScriptGenerator
) -> None:
    attempts = await solve(
        TASK,
        "shop",
        generator=generator,
        llm=config,
        run=FakeRun(),
        first_attempt=4,
        previous_script="emit_result(r.data[0])",
        previous_error=KEY_ERROR,
        max_attempts=1,
    )
    assert [a.number for a in attempts] == [4]
    assert "failed (attempt 3)" in attempts[0].prompt
    assert attempts[0].succeeded


async def test_generating_alone_validates_without_running(
    server: FakeLLMServer, config: LLMConfig, generator: ScriptGenerator
) -> None:
    server.script("import os\nemit_result(1)\n")
    attempt: Attempt = await generate_attempt(TASK, "shop", generator=generator, llm=config)
    assert attempt.status == "invalid"
    assert attempt.outcome is None


async def test_max_attempts_below_one_is_refused(
    config: LLMConfig, generator: ScriptGenerator
) -> None:
    async def run(script: str) -> Any:
        raise AssertionError("never called")

    with pytest.raises(ValueError, match="at least 1"):
        await solve(TASK, "shop", generator=generator, llm=config, run=run, max_attempts=0)


async def test_a_failing_run_callable_propagates(
    server: FakeLLMServer, config: LLMConfig, generator: ScriptGenerator
) -> None:
    async def run(script: str) -> RunOutcome:
        raise RuntimeError("docker engine is gone")

    with pytest.raises(RuntimeError, match="docker engine is gone"):
        await solve(TASK, "shop", generator=generator, llm=config, run=run)


async def test_a_stream_that_breaks_keeps_what_arrived(
    server: FakeLLMServer, config: LLMConfig, generator: ScriptGenerator
) -> None:
    server.script(Reply(text=GOOD, broken="truncated"))
    run = FakeRun()
    [attempt] = await solve(TASK, "shop", generator=generator, llm=config, run=run)
    assert attempt.status == "llm_error"
    assert "broke mid-answer" in (attempt.llm_error or "")
    assert attempt.raw_answer and GOOD.startswith(attempt.raw_answer)
    assert run.scripts == []


async def test_a_script_the_caller_holds_for_a_person_ends_the_loop_and_is_no_error(
    server: FakeLLMServer, config: LLMConfig, generator: ScriptGenerator
) -> None:
    why = "it calls cancel_order, which a person must allow"
    run = FakeRun([RunOutcome(success=False, held=why)])
    events: list[Event] = []
    attempts = await solve(
        TASK, "shop", generator=generator, llm=config, run=run, max_attempts=3,
        on_event=events.append,
    )  # fmt: skip
    assert [a.status for a in attempts] == ["held"]
    assert attempts[0].error is None  # nothing for a next prompt to quote
    kinds = [e["type"] for e in events]
    assert "held" in kinds and "run_finished" not in kinds
    assert kinds[-1] == "finished" and events[-1]["success"] is False
    assert next(e for e in events if e["type"] == "held")["reason"] == why
