"""Submitting: check an agent's script, queue it or run it by policy, and start approved runs."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.dispatch import receiver
from django.utils import timezone

from jazzmine.core.tools import plain_newlines

from ...catalog.models import Sandbox
from ...celery import app as celery_app
from ...runs.models import Language, Run, code_sha256
from ...runs.services import RunRefused, run_create, run_tools_called, script_check
from ...runs.signals import run_finished
from ...teams.models import ApiToken
from ..live import queue_broadcast
from ..models import AuditAction, ReviewPolicy, Submission, SubmissionStatus
from ..selectors import review_settings_locked
from ..signals import submission_event
from .audit import _audit, agent_label
from .errors import (
    EditRefused,
    ReviewConflict,
    ReviewError,
    SubmissionInvalid,
    refused_unless_checked,
)
from .unattended import always_allowed_pins

MAX_BODY_CHARS = 100_000
MAX_TASK_CHARS = 20_000
MAX_PROMPT_CHARS = 200_000


def _check_text(name: str, value: object, *, limit: int, required: bool = True) -> str:
    if value is None:
        if not required:
            return ""
        raise SubmissionInvalid("missing_field", f"'{name}' is required and may not be empty.")
    if not isinstance(value, str):
        raise SubmissionInvalid("invalid_field", f"'{name}' must be a string.")
    if required and not value.strip():
        raise SubmissionInvalid("missing_field", f"'{name}' is required and may not be empty.")
    if len(value) > limit:
        raise SubmissionInvalid("invalid_field", f"'{name}' is longer than {limit} characters.")
    return value


def _needs_review(policy: str, tools_called: list[dict[str, Any]]) -> bool:
    """Tell whether a person must decide: the reading lists possible calls as well as certain ones."""
    if policy == ReviewPolicy.NEVER:
        return False
    if policy == ReviewPolicy.UNLISTED_TOOLS:
        # A tool the reading could not rule out counts as called (fail closed).
        return any(not t.get("always_allow") for t in tools_called)
    return True


@refused_unless_checked
def submission_create(
    *,
    sandbox: Sandbox,
    user: AbstractBaseUser,
    token: ApiToken | None,
    task: object,
    body: object,
    prompt: object = None,
    attempt: object = None,
    previous_id: object = None,
    user_agent: str = "",
    language: object = Language.PYTHON,
) -> Submission:
    """Record an agent's script: refuse it with its violations, queue it, or run it by policy."""
    if language not in Language.values:
        raise SubmissionInvalid(
            "invalid_field", f"'language' must be one of {', '.join(Language.values)}."
        )
    task = _check_text("task", task, limit=MAX_TASK_CHARS)
    body = plain_newlines(_check_text("body", body, limit=MAX_BODY_CHARS))
    prompt = _check_text("prompt", prompt, limit=MAX_PROMPT_CHARS, required=False)
    if attempt is None:
        attempt = 1
    if isinstance(attempt, bool) or not isinstance(attempt, int) or not 1 <= attempt <= 1000:
        raise SubmissionInvalid("invalid_field", "'attempt' must be an integer from 1 to 1000.")
    previous = None
    if previous_id is not None:
        previous = _previous(sandbox=sandbox, previous_id=previous_id, user=user)

    script, violations = script_check(sandbox=sandbox, body=body, language=language)
    # Read the script that would run (fences stripped, assembled), not the raw body.
    tools = run_tools_called(sandbox=sandbox, body=body, language=language, script=script)
    now = timezone.now()
    label = agent_label(token, user)
    sha = code_sha256(script)
    with transaction.atomic():
        # The policy is read in the transaction that records the decision, its row locked as
        # a change of it locks it: a policy tightened meanwhile either comes first (and is
        # the one applied here) or stops this run once it commits (`review_settings_set`).
        # Read before it, a run could be let through by a policy an admin had already left.
        policy_row = review_settings_locked(sandbox)
        if violations:
            status = SubmissionStatus.REJECTED_BY_VALIDATOR
        elif _needs_review(policy_row.policy, tools):
            status = SubmissionStatus.PENDING
        else:
            status = SubmissionStatus.AUTO_APPROVED
        submission = Submission.objects.create(
            sandbox=sandbox,
            task=task,
            prompt=prompt,
            language=language,
            body=body,
            script=script,
            code_sha256=sha,
            body_sha256=code_sha256(body),
            violations=violations,
            tools_called=tools,
            attempt=attempt,
            previous=previous,
            api_token=token,
            agent_name=label,
            agent_user_agent=user_agent[:300],
            submitted_by=user,
            policy=policy_row.policy,
            status=status,
            expires_at=(
                now + datetime.timedelta(seconds=policy_row.timeout_seconds)
                if status == SubmissionStatus.PENDING
                else None
            ),
            decided_at=None if status == SubmissionStatus.PENDING else now,
        )
        common = {"sandbox": sandbox, "submission": submission, "user": user, "token": token}
        _audit(action=AuditAction.SUBMITTED, sha256=sha, data={"attempt": attempt}, **common)
        if status == SubmissionStatus.REJECTED_BY_VALIDATOR:
            _audit(
                action=AuditAction.REJECTED_BY_VALIDATOR,
                label="validator",
                sandbox=sandbox,
                submission=submission,
                sha256=sha,
                data={"violations": violations},
            )
        elif status == SubmissionStatus.AUTO_APPROVED:
            _audit(
                action=AuditAction.AUTO_APPROVED,
                label="policy",
                sandbox=sandbox,
                submission=submission,
                sha256=sha,
                data={"policy": policy_row.policy},
            )
            _approve_and_start(
                submission=submission, body=body, script=script, user=user, source="api"
            )
    _after_commit(
        submission,
        webhook_event="submission.decided" if status == SubmissionStatus.AUTO_APPROVED else None,
    )
    return submission


def _previous(*, sandbox: Sandbox, previous_id: object, user: AbstractBaseUser) -> Submission:
    """Return the earlier attempt a submission answers: one its own person sent, in the sandbox.

    Any of the person's agents (tokens: one may replace another). Another person's approved
    script made a new one read, on its review page, as a small retry of something a reviewer
    had already trusted, with a diff against it.
    """
    try:
        found = Submission.objects.filter(
            pk=str(previous_id), sandbox=sandbox, submitted_by=user
        ).first()
    except (ValueError, TypeError, Exception) as exc:  # a malformed UUID
        if isinstance(exc, ReviewError):
            raise
        found = None
    if found is None:
        raise SubmissionInvalid(
            "previous_not_found",
            f"No earlier submission {previous_id} of yours in this sandbox.",
        )
    return found


def _approve_and_start(
    *,
    submission: Submission,
    body: str,
    script: str,
    user: AbstractBaseUser | None,
    source: str,
    approved_tools: Mapping[str, str] | None = None,
) -> Run:
    """Start the run of an approved script and record that the code that runs is the approved code."""
    approved_sha = code_sha256(script)
    # The run carries the decision that let it through: every tool when the sandbox never
    # reviews; the tools a reviewer was shown when a person approved it (`approved_tools`,
    # each at the code it had then: the worker drops one whose code changed since);
    # only the always-allowed ones when the policy let it through on the reading alone;
    # nothing for any other state (fail closed).
    # A reviewer's approval is not every tool: a tool created (or renamed, or published)
    # under a name the script calls, between the approval and the worker's preparation of
    # the run, would otherwise run under a decision that never named it.
    # Each always-allowed tool is bound to the code an admin had accepted (its digest): the
    # worker drops one whose code changed while the run waited (`runs.preparation`).
    allowed_tools: dict[str, str] | list[str] | None = {}
    by_reviewer = False
    if submission.status in (SubmissionStatus.APPROVED, SubmissionStatus.EDITED_AND_APPROVED):
        allowed_tools, by_reviewer = dict(approved_tools or {}), True
    elif submission.status == SubmissionStatus.AUTO_APPROVED:
        if submission.policy == ReviewPolicy.NEVER:
            allowed_tools = None
        elif submission.policy == ReviewPolicy.UNLISTED_TOOLS:
            allowed_tools = always_allowed_pins(submission.sandbox)
    try:
        run = run_create(
            sandbox=submission.sandbox,
            user=user,
            body=body,
            task=submission.task,
            attempt=submission.attempt,
            source=source,
            language=submission.language,
            allowed_tools=allowed_tools,
            allowed_by_reviewer=by_reviewer,
            # Let through with no person reading it: it goes on the agent's token too.
            api_token=None if by_reviewer else submission.api_token,
        )
    except RunRefused as exc:  # the sandbox's tools changed since the script was checked
        raise EditRefused(exc.violations) from exc
    if run.code_sha256 != approved_sha:
        # Fail closed: what would run is not byte for byte what was approved.
        raise ReviewConflict(
            "code_changed", "The assembled script changed between approval and run; approve again."
        )
    Submission.objects.filter(pk=submission.pk).update(
        approved_body=body, approved_script=script, approved_sha256=approved_sha, run=run
    )
    submission.approved_body, submission.approved_script = body, script
    submission.approved_sha256, submission.run = approved_sha, run
    _audit(
        action=AuditAction.RUN_STARTED,
        sandbox=submission.sandbox,
        submission=submission,
        label=user.get_username() if user is not None else "system",
        user=user,
        sha256=run.code_sha256,
        data={"run_id": str(run.pk), "source": source},
    )
    return run


@receiver(run_finished)
def _on_run_finished(*, run_id: Any, **_kwargs: Any) -> None:
    """Note a reviewed run's end as soon as it ends (the sweep catches any miss)."""
    submission_id = Submission.objects.filter(run_id=run_id).values_list("pk", flat=True).first()
    if submission_id is not None:
        # A task of its own: auditing and webhooks are not the run's business.
        celery_app.send_task("reviews.note_run_finished", args=[submission_id])


def _after_commit(submission: Submission, *, webhook_event: str | None) -> None:
    team_id, pk, status = submission.sandbox.team_id, submission.pk, submission.status
    transaction.on_commit(lambda: queue_broadcast(team_id=team_id, submission_id=pk, status=status))
    if webhook_event is not None:
        submission_event.send(sender=Submission, submission_id=pk, event=webhook_event)
