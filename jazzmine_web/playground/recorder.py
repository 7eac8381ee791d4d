"""Turn the orchestrator's events into stored attempts and runs, for one playground session."""

from __future__ import annotations

import json
import time
from typing import Any

from channels.db import database_sync_to_async

from jazzmine.orchestrator import RunOutcome

from ..reviews.services import NeedsPerson
from ..runs.models import Run, RunStatus
from ..runs.services import run_group
from ..studio.live import GroupWaiter, group_send
from ..studio.storable import storable_json
from .models import Attempt, AttemptSource, PlaygroundSession
from .services import attempt_record, attempt_run, session_group

FINISH_REASON_CHARS = Attempt._meta.get_field("finish_reason").max_length


def finish_reason_storable(value: Any) -> str:
    """Return an endpoint's finish_reason as its attempt stores it, and the browser is sent.

    It is any JSON value the endpoint chose; OpenAI's are short words. Anything else is kept
    as text cut to the column (PostgreSQL refuses a longer one, and the attempt was lost).
    """
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value)
    if len(text) <= FINISH_REASON_CHARS:
        return text
    return text[: FINISH_REASON_CHARS - 1] + "…"


class AttemptRecorder:
    """Store each attempt as the loop reports it, and run scripts through the run worker."""

    def __init__(
        self,
        *,
        session: PlaygroundSession,
        user: Any,
        send: Any,
        follow: Any = None,
        language: str = "python",
    ) -> None:
        self.session = session
        self.follow = follow  # async callable: stream a run's events on the same socket
        self.language = language
        self.user = user
        self.send = send  # async callable: forwards a JSON message to the browser
        self.current: Attempt | None = None
        self.prompts: dict[int, tuple[str, str]] = {}
        self.previous_error = ""
        self.raw: dict[int, list[str]] = {}
        # The attempt the LLM is answering now, since when, and when its first token came
        # (`stopped` stores it if the generation ends before the answer does).
        self.generating: tuple[int, float] | None = None
        self.first_token_at: float | None = None

    async def on_event(self, event: dict[str, Any]) -> None:
        """Persist what an event settles, then forward it to the browser."""
        # The LLM's answer is kept whatever it holds: a NUL becomes U+FFFD (`storable`) in what
        # is stored and in what the browser is sent alike. The loop itself validates the
        # answer as it came, NUL and all, and retries with that violation.
        event = storable_json(event)
        kind = event["type"]
        if "finish_reason" in event:
            event = {**event, "finish_reason": finish_reason_storable(event["finish_reason"])}
        if kind == "token":
            self.raw.setdefault(event["attempt"], []).append(event["text"])
            if self.first_token_at is None:
                self.first_token_at = time.monotonic()
        elif kind == "attempt_started":
            self.prompts[event["attempt"]] = (event["prompt"], event["hint"])
            self.generating = (event["attempt"], time.monotonic())
            self.first_token_at = None
        elif kind == "generated":
            self.generating = None
            self.current = await self._store(event, llm_error="")
            event = {**event, "attempt_id": self.current.pk, "number": self.current.number}
        elif kind == "llm_error":
            self.generating = None
            self.current = await self._store(event, llm_error=event["error"])
            event = {**event, "attempt_id": self.current.pk}
        elif kind == "validated" and self.current is not None and event["violations"]:
            await database_sync_to_async(_set_violations)(self.current, event["violations"])
        if kind in ("validated", "run_finished") and self.current is not None:
            # The list's number: the loop's own count starts again at each Generate.
            event = {**event, "number": self.current.number}
        await self.send(event)

    async def _store(self, event: dict[str, Any], *, llm_error: str) -> Attempt:
        return await self._record(
            event["attempt"],
            body=event.get("body", ""),
            llm_error=llm_error,
            finish_reason=event.get("finish_reason", ""),
            prompt_tokens=event.get("prompt_tokens"),
            completion_tokens=event.get("completion_tokens"),
            generation_seconds=event.get("seconds"),
            first_token_seconds=event.get("first_token_seconds"),
        )

    async def _record(self, number: int, **fields: Any) -> Attempt:
        """Store the LLM's attempt `number`: its prompt, its answer as it came, and `fields`."""
        prompt, hint = self.prompts.get(number, ("", ""))
        return await database_sync_to_async(attempt_record)(
            session=self.session,
            source=AttemptSource.LLM,
            language=self.language,
            prompt=prompt,
            hint=hint,
            previous_error=self.previous_error,
            raw_answer="".join(self.raw.get(number, [])),
            **fields,
        )

    async def stopped(self, reason: str) -> Attempt | None:
        """Store the attempt whose generation ended before the LLM's answer did, if any.

        What the LLM had sent is its `raw_answer`; it has no script (nothing was taken from a
        half answer), so it is neither run nor quoted by a retry. None: no answer was coming.
        """
        if self.generating is None:
            return None
        number, since = self.generating
        self.generating = None
        first = self.first_token_at
        attempt = await self._record(
            number,
            stopped=reason,
            generation_seconds=round(time.monotonic() - since, 3),
            first_token_seconds=None if first is None else round(first - since, 3),
        )
        # A reloaded page was rendered before this page's socket closed: it hears it here.
        session = str(self.session.pk)
        group_send(session_group(session), {"type": "attempts.changed", "session": session})
        return attempt

    async def run(self, _script: str) -> RunOutcome:
        """Run the current attempt's body, unread (the loop's), and wait for the run to end."""
        attempt = self.current
        assert attempt is not None, "the loop runs only what it generated"
        try:
            attempt = await database_sync_to_async(attempt_run)(
                attempt=attempt, user=self.user, unattended=True
            )
        except NeedsPerson as held:
            self.previous_error = ""
            return RunOutcome(success=False, held=f"attempt {attempt.number} was not run: {held}")
        if attempt.run_id is None:  # refused at the last moment: report as violations
            error = "\n".join(attempt.violations)
            self.previous_error = error
            return RunOutcome(success=False, error=error)
        await self.send(
            {"type": "run_created", "attempt_id": attempt.pk, "run_id": str(attempt.run_id)}
        )
        if self.follow is not None:
            await self.follow(str(attempt.run_id))
        run = await wait_for_run(attempt.run_id)
        outcome = RunOutcome(
            success=run.status == RunStatus.SUCCEEDED,
            result=run.result,
            error=None if run.status == RunStatus.SUCCEEDED else (run.error or run.message),
            ref=str(run.pk),
        )
        self.previous_error = outcome.error or ""
        return outcome


def _set_violations(attempt: Attempt, violations: list[str]) -> None:
    attempt.violations = violations
    attempt.save(update_fields=["violations"])


async def wait_for_run(run_id: Any, *, recheck: float = 5.0) -> Run:
    """Wait until a run (executed by a worker, maybe on another host) has finished; return it.

    It sleeps on the run's channel group and reads the row only when the run said something
    (or, should a message be lost, every `recheck` seconds).
    """
    async with GroupWaiter() as waiter:
        await waiter.join([run_group(run_id)])
        while True:
            run = await database_sync_to_async(Run.objects.get)(pk=run_id)
            if run.is_finished:
                return run
            await waiter.wait(recheck)
