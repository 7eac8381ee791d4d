"""Playground logic: LLM settings, live checks of the editor, prompts, attempts and their runs."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import Max

from jazzmine.bash import specs_for_sandbox
from jazzmine.bash.generator import BashScriptGenerator
from jazzmine.core.tools import ScriptGenerator, plain_newlines
from jazzmine.core.tools.generator import retry_hint
from jazzmine.llm import LLMConfig

from ..catalog.crypto import decrypt, encrypt
from ..catalog.models import Sandbox, Tool
from ..catalog.selectors import sandbox_for_user
from ..catalog.services.registry import registry_for_sandbox, script_tool_from_row
from ..reviews.services import unattended_allowed_tools
from ..runs.models import Language
from ..runs.preparation import bash_limits_for
from ..runs.reading import answer_reader
from ..runs.services import RunRefused, run_create, run_tools_called, script_check
from .checks import CheckedGenerator
from .models import Attempt, AttemptSource, LLMSettings, PlaygroundSession


def sandbox_tool_names(sandbox: Sandbox | int) -> list[str]:
    """Return the names of a sandbox's tools (all the validator needs)."""
    sandbox_id = getattr(sandbox, "pk", sandbox)
    return list(Tool.objects.filter(sandbox_id=sandbox_id).values_list("name", flat=True))


def script_generator_for(*, sandbox: Sandbox, language: str = Language.PYTHON) -> Any:
    """Return the prompt builder and checker of a language over the sandbox's tools."""
    registry = registry_for_sandbox(sandbox)
    if language != Language.BASH:
        return ScriptGenerator(registry)
    script_tools = [t for t in map(script_tool_from_row, sandbox.tool_rows()) if t is not None]
    specs = specs_for_sandbox(registry, sandbox.name, script_tools=script_tools)
    return BashScriptGenerator(
        specs, limits=bash_limits_for(sandbox), max_chars=settings.JAZZMINE_MAX_BASH_CHARS
    )


def loop_generator_for(*, sandbox: Sandbox, language: str = Language.PYTHON) -> CheckedGenerator:
    """Return the generator of the Generate and Auto loops: it reads a big answer in the checker.

    An LLM's answer is untrusted text up to the answer limit (over 200 KB): the loop parses it
    two or three times, which must not hold the web process's GIL (`checks.CheckedGenerator`).
    """
    generator = script_generator_for(sandbox=sandbox, language=language)
    return CheckedGenerator(generator, answer_reader(generator, sandbox.name))


def llm_config_for(user: AbstractBaseUser) -> LLMConfig | None:
    """Return the user's own endpoint, else the server's, else None (nothing configured)."""
    own = LLMSettings.objects.filter(user=user).first()
    if own is not None and own.base_url and own.model:
        return LLMConfig(
            base_url=own.base_url,
            api_key=decrypt(own.api_key_ciphertext) if own.api_key_ciphertext else None,
            model=own.model,
            temperature=own.temperature,
            allowed_hosts=tuple(settings.JAZZMINE_OUTBOUND_ALLOWED_HOSTS),
        )
    if settings.JAZZMINE_LLM_BASE_URL and settings.JAZZMINE_LLM_MODEL:
        return LLMConfig(
            base_url=settings.JAZZMINE_LLM_BASE_URL,
            api_key=settings.JAZZMINE_LLM_API_KEY or None,
            model=settings.JAZZMINE_LLM_MODEL,
            allowed_hosts=tuple(settings.JAZZMINE_OUTBOUND_ALLOWED_HOSTS),
        )
    return None


def llm_settings_save(
    *,
    user: AbstractBaseUser,
    base_url: str,
    model: str,
    api_key: str | None,
    temperature: float | None = None,
) -> LLMSettings:
    """Store a user's endpoint; `api_key=None` keeps the stored key, "" clears it."""
    row, _ = LLMSettings.objects.get_or_create(user=user)
    row.base_url = base_url.strip()
    row.model = model.strip()
    row.temperature = temperature
    if api_key is not None:
        row.api_key_ciphertext = encrypt(api_key) if api_key else ""
    row.save()
    return row


def session_open(
    *, user: AbstractBaseUser, sandbox: Sandbox, session_id: Any = None, task: str = ""
) -> PlaygroundSession:
    """Return the user's session by id in this sandbox, or start a new one."""
    if session_id:
        found = (
            PlaygroundSession.objects.filter(pk=session_id, user=user, sandbox=sandbox)
            .select_related("sandbox")  # async callers read session.sandbox: no lazy query
            .first()
        )
        if found is not None:
            if task and task != found.task:
                found.task = task
                found.save(update_fields=["task", "updated_at"])
            return found
    return PlaygroundSession.objects.create(user=user, sandbox=sandbox, task=task)


@dataclass(frozen=True)
class PromptView:
    """A prompt as the page shows it."""

    text: str
    hint: str
    attempt: int
    previous_script: str
    previous_error: str

    @property
    def chars(self) -> int:
        """Return the prompt's length in characters."""
        return len(self.text)

    @property
    def tokens(self) -> int:
        """Estimate tokens the way OpenAI's rule of thumb does (about 4 characters each)."""
        return max(1, round(len(self.text) / 4)) if self.text else 0


def prompt_for(
    *,
    sandbox: Sandbox,
    task: str,
    session: PlaygroundSession | None = None,
    retry: bool = False,
    language: str = Language.PYTHON,
    before: int | None = None,
) -> PromptView:
    """Return the prompt of the next attempt: the first form, or the retry form after a failure.

    The retry form quotes the session's last attempt and what went wrong with it; without a
    failed attempt to quote there is nothing to retry, and the first form is shown. `before`
    is the number of an attempt already recorded: its prompt quotes the one before it.
    """
    generator = script_generator_for(sandbox=sandbox, language=language)
    last = None
    if session is not None:
        # A generation stopped before the LLM finished is no attempt to retry from: the retry
        # quotes the one before it, as though it had never started.
        earlier = session.attempts.filter(stopped="")
        if before is not None:
            earlier = earlier.filter(number__lt=before)
        last = earlier.order_by("-number").first()
    previous_script = previous_error = ""
    number = 1
    if retry and last is not None and last.error_text:
        previous_script, previous_error, number = last.body, last.error_text, last.number + 1
    text = generator.build_prompt(
        task,
        sandbox.name,
        previous_script=previous_script or None,
        previous_error=previous_error or None,
        attempt=number,
    )
    hint = retry_hint(previous_error).strip() if number > 1 and language != Language.BASH else ""
    return PromptView(text, hint, number, previous_script, previous_error)


def session_group(session_id: object) -> str:
    """Return the channel group of the pages showing one playground session."""
    return f"playground-session-{uuid.UUID(str(session_id)).hex}"


def attempt_next_number(session: PlaygroundSession) -> int:
    """Return the number the session's next attempt gets."""
    return (session.attempts.aggregate(n=Max("number"))["n"] or 0) + 1


def attempt_record(*, session: PlaygroundSession, **fields: Any) -> Attempt:
    """Store an attempt with the next number of its session."""
    # No savepoint of its own inside a caller's transaction (two round trips fewer on a run's
    # way in): a failure here fails the caller's whole transaction, which no caller goes on
    # with anyway.
    if "body" in fields:  # the lines the editor draws are the ones that run
        fields["body"] = plain_newlines(fields["body"])
    # The task as the session holds it now: the next Generate or Run with another task in the
    # box writes over the session's, and this attempt was made for this one.
    fields.setdefault("task", session.task)
    with transaction.atomic(savepoint=False):
        number = attempt_next_number(session)
        attempt = Attempt.objects.create(session=session, number=number, **fields)
    session.save(update_fields=["updated_at"])
    return attempt


class PlaygroundForbidden(Exception):
    """The person may no longer use the sandbox (they left its team, or it is gone)."""


def attempt_run(
    *,
    attempt: Attempt,
    user: AbstractBaseUser,
    unattended: bool = False,
    checked: Sandbox | None = None,
) -> Attempt:
    """Run an attempt's body in its sandbox (or record why it may not run).

    A member pressing Run has read the script: every tool, as a person's approval. An
    `unattended` run (the Auto loop runs what the LLM wrote, unread) may call only what a
    script nobody read may call; one that needs more raises `NeedsPerson` and does not run.
    Either way the member must still be allowed the sandbox: the loop outlives its start.
    `checked` is the session's sandbox as the caller has just read it with the user's access
    (`sandbox_for_user`, in the same request): it is not asked again.
    """
    session = attempt.session
    fresh = checked is not None and checked.pk == session.sandbox_id
    if not fresh and sandbox_for_user(user, session.sandbox_id) is None:
        raise PlaygroundForbidden("you may no longer run scripts in this sandbox")
    allowed_tools: dict[str, str] | None = None
    if unattended:
        # No tool until the reading below says which: a script its first check refused is
        # checked again as its run is made, and the sandbox's tools may have changed between
        # (a tool created under the name it calls), so that run must not call every tool.
        allowed_tools = {}
        script, violations = script_check(
            sandbox=session.sandbox, body=attempt.body, language=attempt.language
        )
        if not violations:  # a refused script is refused below, with its violations
            allowed_tools = unattended_allowed_tools(
                sandbox=session.sandbox,
                tools_called=run_tools_called(
                    sandbox=session.sandbox,
                    body=attempt.body,
                    language=attempt.language,
                    script=script,
                ),
            )
    try:
        run = run_create(
            sandbox=session.sandbox,
            user=user,
            body=attempt.body,
            # What the script was made for: an LLM's attempt run after the task box changed
            # is still an answer to the task its prompt quotes.
            task=session.task if attempt.task is None else attempt.task,
            attempt=attempt.number,
            source="playground",
            language=attempt.language,
            allowed_tools=allowed_tools,
        )
    except RunRefused as refused:
        attempt.violations = refused.violations
        attempt.save(update_fields=["violations"])
        return attempt
    attempt.run = run
    attempt.save(update_fields=["run"])
    return attempt


def human_attempt_create(
    *,
    session: PlaygroundSession,
    user: AbstractBaseUser,
    body: str,
    language: str = Language.PYTHON,
    checked: Sandbox | None = None,
) -> Attempt:
    """Record a script a person wrote (or edited) as the session's next attempt, and run it.

    The attempt, its run and the run's audit entry commit together, and the run goes to a
    worker at that commit. The prompt the attempt answers comes after (`attempt_prompt_record`),
    off the run's way to its first event. `checked`: as `attempt_run`'s.
    """
    with transaction.atomic():
        attempt = attempt_record(
            session=session, language=language, source=AttemptSource.HUMAN, body=body
        )
        attempt_run(attempt=attempt, user=user, checked=checked)
    return attempt


# What an LLM's attempt run again carries over: its generation, for the prompt debugger,
# and the task it answers.
_GENERATION_FIELDS = (
    "task", "prompt", "hint", "previous_error", "raw_answer", "finish_reason", "prompt_tokens",
    "completion_tokens", "generation_seconds", "first_token_seconds",
)  # fmt: skip


def attempt_run_again(
    *, attempt: Attempt, user: AbstractBaseUser, checked: Sandbox | None = None
) -> Attempt:
    """Run an LLM's attempt that ran already, unedited, as the session's next attempt.

    Still the LLM's script, with its prompt and answer: pressed Run a second time, it was
    recorded as "Written by a person", and the prompt debugger compared a person's attempt
    where the LLM's had run twice. `checked`: as `attempt_run`'s.
    """
    with transaction.atomic():
        again = attempt_record(
            session=attempt.session,
            language=attempt.language,
            source=attempt.source,
            body=attempt.body,
            **{name: getattr(attempt, name) for name in _GENERATION_FIELDS},
        )
        attempt_run(attempt=again, user=user, checked=checked)
    return again


def attempt_prompt_record(*, attempt: Attempt, retry: bool) -> None:
    """Store the prompt a person's attempt answers, as the prompt debugger shows it.

    With `retry`, the retry form quoting the attempt before this one and what went wrong.
    """
    session = attempt.session
    view = prompt_for(
        sandbox=session.sandbox,
        task=session.task if attempt.task is None else attempt.task,
        session=session,
        retry=retry,
        language=attempt.language,
        before=attempt.number,
    )
    attempt.prompt, attempt.hint, attempt.previous_error = view.text, view.hint, view.previous_error
    attempt.save(update_fields=["prompt", "hint", "previous_error"])
