"""Writes for reviews: submit, decide, expire, note run ends; each one audited."""

from __future__ import annotations

import datetime
import logging
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.dispatch import receiver
from django.utils import timezone

from ..catalog.models import Sandbox
from ..catalog.signals import catalog_changed
from ..celery import app as celery_app
from ..runs.lifecycle import run_stop
from ..runs.models import Language, Run, RunStatus, code_sha256
from ..runs.services import RunRefused, run_create, run_tools_called, script_check
from ..runs.signals import run_created, run_finished
from ..studio.diffs import unified_diff
from ..teams.models import ApiToken, Role
from ..teams.selectors import user_has_team_role
from .analysis import normalise_body
from .live import queue_broadcast
from .models import (
    AuditAction,
    AuditEntry,
    ReviewPolicy,
    SandboxReviewSettings,
    Submission,
    SubmissionStatus,
)
from .selectors import review_settings_for

logger = logging.getLogger(__name__)

MAX_BODY_CHARS = 100_000
MAX_TASK_CHARS = 20_000
MAX_PROMPT_CHARS = 200_000


class ReviewError(Exception):
    """A review action that cannot happen; `code` is stable for the API and the tests."""

    status = 400

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class SubmissionInvalid(ReviewError):
    """A submission request with a missing or bad field."""


class ReviewForbidden(ReviewError):
    """The person (or token) may not make this decision."""

    status = 403


class ReviewConflict(ReviewError):
    """The submission is no longer waiting for a decision."""

    status = 409


class EditRefused(ReviewError):
    """A reviewer's edit breaks the validator's rules; nothing was approved."""

    def __init__(self, violations: list[str]) -> None:
        super().__init__("edit_has_violations", "; ".join(violations))
        self.violations = violations


# Policy and audit


def review_settings_set(
    *, sandbox: Sandbox, user: AbstractBaseUser, policy: str, timeout_seconds: int
) -> SandboxReviewSettings:
    """Change how a sandbox's submissions are reviewed (team admins only)."""
    if not user_has_team_role(user=user, team=sandbox.team, role=Role.ADMIN):
        raise ReviewForbidden("not_admin", "Only team admins change a sandbox's review policy.")
    if policy not in ReviewPolicy.values:
        raise SubmissionInvalid("invalid_policy", f"Unknown review policy {policy!r}.")
    if not 10 <= int(timeout_seconds) <= 30 * 86400:
        raise SubmissionInvalid(
            "invalid_timeout", "The review timeout must be between 10 seconds and 30 days."
        )
    with transaction.atomic():
        row, _ = SandboxReviewSettings.objects.update_or_create(
            sandbox=sandbox,
            defaults={
                "policy": policy,
                "timeout_seconds": int(timeout_seconds),
                "updated_by": user,
            },
        )
        _audit(
            sandbox=sandbox,
            action=AuditAction.POLICY_CHANGED,
            user=user,
            data={"policy": policy, "timeout_seconds": int(timeout_seconds)},
        )
    return row


def agent_label(token: ApiToken | None, user: AbstractBaseUser | AnonymousUser | None) -> str:
    """Return how the audit names an agent: its token and the token's owner."""
    owner = user.get_username() if user is not None and user.is_authenticated else "?"
    return f"agent {token.name} ({owner})" if token is not None else owner


def _audit(
    *,
    sandbox: Sandbox,
    action: str,
    submission: Submission | None = None,
    user: AbstractBaseUser | None = None,
    token: ApiToken | None = None,
    label: str = "",
    sha256: str = "",
    note: str = "",
    data: dict[str, Any] | None = None,
) -> AuditEntry:
    if not label:
        label = (
            agent_label(token, user)
            if token is not None
            else (user.get_username() if user else "system")
        )
    return AuditEntry.objects.create(
        submission=submission,
        sandbox=sandbox,
        action=action,
        actor_user=user,
        actor_token=token,
        actor_label=label[:200],
        code_sha256=sha256,
        note=note,
        data=data or {},
    )


# Submitting


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
    body = normalise_body(_check_text("body", body, limit=MAX_BODY_CHARS))
    prompt = _check_text("prompt", prompt, limit=MAX_PROMPT_CHARS, required=False)
    if attempt is None:
        attempt = 1
    if isinstance(attempt, bool) or not isinstance(attempt, int) or not 1 <= attempt <= 1000:
        raise SubmissionInvalid("invalid_field", "'attempt' must be an integer from 1 to 1000.")
    previous = None
    if previous_id is not None:
        previous = _previous(sandbox=sandbox, previous_id=previous_id)

    script, violations = script_check(sandbox=sandbox, body=body, language=language)
    # Read the script that would run (fences stripped, assembled), not the raw body.
    tools = run_tools_called(sandbox=sandbox, body=body, language=language, script=script)
    policy_row = review_settings_for(sandbox)
    now = timezone.now()
    if violations:
        status = SubmissionStatus.REJECTED_BY_VALIDATOR
    elif _needs_review(policy_row.policy, tools):
        status = SubmissionStatus.PENDING
    else:
        status = SubmissionStatus.AUTO_APPROVED
    label = agent_label(token, user)
    sha = code_sha256(script)
    with transaction.atomic():
        submission = Submission.objects.create(
            sandbox=sandbox,
            task=task,
            prompt=prompt,
            language=language,
            body=body,
            script=script,
            code_sha256=sha,
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


def _previous(*, sandbox: Sandbox, previous_id: object) -> Submission:
    try:
        found = Submission.objects.filter(pk=str(previous_id), sandbox=sandbox).first()
    except (ValueError, TypeError, Exception) as exc:  # a malformed UUID
        if isinstance(exc, ReviewError):
            raise
        found = None
    if found is None:
        raise SubmissionInvalid(
            "previous_not_found", f"No earlier submission {previous_id} in this sandbox."
        )
    return found


def _approve_and_start(
    *, submission: Submission, body: str, script: str, user: AbstractBaseUser | None, source: str
) -> Run:
    """Start the run of an approved script and record that the code that runs is the approved code."""
    approved_sha = code_sha256(script)
    # The run carries the decision that let it through: every tool when a person approved
    # it or the sandbox never reviews; only the always-allowed ones when the policy let it
    # through on the reading alone; nothing for any other state (fail closed).
    allowed_tools: list[str] | None = []
    if submission.status in (SubmissionStatus.APPROVED, SubmissionStatus.EDITED_AND_APPROVED):
        allowed_tools = None
    elif submission.status == SubmissionStatus.AUTO_APPROVED:
        if submission.policy == ReviewPolicy.NEVER:
            allowed_tools = None
        elif submission.policy == ReviewPolicy.UNLISTED_TOOLS:
            rows = submission.sandbox.tools.filter(published=True, always_allow=True)
            allowed_tools = [t.name for t in rows if t.is_always_allowed]
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
        # Here, not at the top: webhooks imports this module (SubmissionInvalid).
        from .webhooks import webhook_enqueue

        webhook_enqueue(submission_id=pk, event=webhook_event)


# Deciding


def submission_refresh(*, submission: Submission) -> Submission:
    """Return the submission as stored now, expired first when it is overdue (fail closed)."""
    if submission.status == SubmissionStatus.PENDING and _overdue(submission, timezone.now()):
        submissions_expire_overdue(submission_ids=[submission.pk])
    return Submission.objects.select_related(
        "sandbox", "sandbox__team", "api_token", "submitted_by", "decided_by", "run", "previous"
    ).get(pk=submission.pk)


def _overdue(submission: Submission, now: datetime.datetime) -> bool:
    return submission.expires_at is not None and submission.expires_at <= now


def submission_decide_check(*, submission: Submission, user: AbstractBaseUser) -> None:
    """Raise unless this person may decide on this submission now."""
    if not user_has_team_role(user=user, team=submission.sandbox.team, role=Role.REVIEWER):
        raise ReviewForbidden("not_reviewer", "Only reviewers of this team decide on submissions.")
    if submission.status != SubmissionStatus.PENDING:
        raise ReviewConflict(
            "already_decided", f"This submission is {submission.get_status_display().lower()}."
        )


def _check_not_own(*, submission: Submission, user: AbstractBaseUser) -> None:
    if submission.submitted_by_id is not None and submission.submitted_by_id == user.pk:
        raise ReviewForbidden(
            "self_approval",
            "Your own API token submitted this script; another reviewer must approve it.",
        )


def _claim(
    *, submission: Submission, status: str, user: AbstractBaseUser, feedback: str = ""
) -> None:
    """Move a pending submission to a decision, or fail if someone (or the clock) got there first."""
    now = timezone.now()
    claimed = Submission.objects.filter(
        pk=submission.pk, status=SubmissionStatus.PENDING, expires_at__gt=now
    ).update(status=status, decided_at=now, decided_by=user, feedback=feedback)
    if not claimed:
        raise ReviewConflict("already_decided", "This submission was decided or expired meanwhile.")
    submission.status, submission.decided_at = status, now
    submission.decided_by, submission.feedback = user, feedback


def submission_approve(
    *, submission: Submission, user: AbstractBaseUser, body: str | None = None, note: str = ""
) -> Submission:
    """Approve a pending script, or a reviewer's edit of it (validated again), and start its run."""
    submission = submission_refresh(submission=submission)
    submission_decide_check(submission=submission, user=user)
    _check_not_own(submission=submission, user=user)
    final_body = submission.body if body is None else normalise_body(body)
    edited = final_body != submission.body
    if edited:
        if not final_body.strip():
            raise SubmissionInvalid("missing_field", "The edited script is empty.")
        script, violations = script_check(
            sandbox=submission.sandbox, body=final_body, language=submission.language
        )
        if violations:
            raise EditRefused(violations)
    else:
        script = submission.script
    status = SubmissionStatus.EDITED_AND_APPROVED if edited else SubmissionStatus.APPROVED
    sha = code_sha256(script)
    with transaction.atomic():
        _claim(submission=submission, status=status, user=user, feedback=note)
        if edited:
            _audit(
                action=AuditAction.EDITED,
                sandbox=submission.sandbox,
                submission=submission,
                user=user,
                sha256=sha,
                data={"original_sha256": submission.code_sha256},
            )
        _audit(
            action=AuditAction.EDITED_AND_APPROVED if edited else AuditAction.APPROVED,
            sandbox=submission.sandbox,
            submission=submission,
            user=user,
            sha256=sha,
            note=note,
        )
        _approve_and_start(
            submission=submission, body=final_body, script=script, user=user, source="review"
        )
    _after_commit(submission, webhook_event="submission.decided")
    return submission_refresh(submission=submission)


def submission_reject(
    *, submission: Submission, user: AbstractBaseUser, feedback: str
) -> Submission:
    """Reject a pending script with feedback the agent's next prompt will quote."""
    submission = submission_refresh(submission=submission)
    submission_decide_check(submission=submission, user=user)
    feedback = (feedback or "").strip()
    if not feedback:
        raise SubmissionInvalid(
            "feedback_required", "Say why it is rejected: the agent's next attempt reads it."
        )
    with transaction.atomic():
        _claim(
            submission=submission, status=SubmissionStatus.REJECTED, user=user, feedback=feedback
        )
        _audit(
            action=AuditAction.REJECTED,
            sandbox=submission.sandbox,
            submission=submission,
            user=user,
            sha256=submission.code_sha256,
            note=feedback,
        )
    _after_commit(submission, webhook_event="submission.decided")
    return submission_refresh(submission=submission)


# Expiry and run ends (the sweep and lazy reads call these)


def submission_run_cancel(
    *, submission: Submission, user: AbstractBaseUser, token: ApiToken | None = None
) -> bool:
    """Stop the run of a submission for the agent that submitted it; tell whether it was live.

    A queued run ends at once; a running one when its worker has killed the sandbox (within
    a second). A run that already ended is left as it is.
    """
    if submission.submitted_by_id != user.pk:
        raise ReviewForbidden(
            "not_your_submission", "Only the user whose agent submitted it may cancel its run."
        )
    run = submission.run
    if run is None:
        raise ReviewConflict(
            "no_run",
            f"Submission {submission.pk} has no run to cancel (it is {submission.status}).",
        )
    label = agent_label(token, user)
    stopped = run_stop(run_id=run.pk, reason=f"cancelled by {label}: the sandbox was stopped")
    if stopped:
        _audit(
            sandbox=submission.sandbox,
            action=AuditAction.RUN_CANCELLED,
            submission=submission,
            user=user,
            token=token,
            sha256=run.code_sha256,
        )
    return stopped


def submissions_expire_overdue(
    *, now: datetime.datetime | None = None, submission_ids: list[Any] | None = None
) -> int:
    """Expire the pending submissions whose review time is up; tell their agents."""
    now = now or timezone.now()
    rows = Submission.objects.filter(status=SubmissionStatus.PENDING, expires_at__lte=now)
    if submission_ids is not None:
        rows = rows.filter(pk__in=submission_ids)
    count = 0
    for submission in rows.select_related("sandbox"):
        waited = int((submission.expires_at - submission.created_at).total_seconds())
        feedback = f"No reviewer decided within {waited} seconds; the script did not run."
        with transaction.atomic():
            changed = Submission.objects.filter(
                pk=submission.pk, status=SubmissionStatus.PENDING
            ).update(status=SubmissionStatus.EXPIRED, decided_at=now, feedback=feedback)
            if not changed:
                continue  # a reviewer decided in the meantime
            submission.status = SubmissionStatus.EXPIRED
            _audit(
                action=AuditAction.EXPIRED,
                sandbox=submission.sandbox,
                submission=submission,
                label="expiry",
                sha256=submission.code_sha256,
                note=feedback,
            )
        _after_commit(submission, webhook_event="submission.expired")
        count += 1
    if count:
        logger.info("expired %d submission(s) nobody reviewed in time", count)
    return count


def submission_note_run_finished(*, submission_id: Any) -> bool:
    """Record a submission's run end once (audit and webhook); tell whether this call did it."""
    submission = (
        Submission.objects.select_related("sandbox", "run").filter(pk=submission_id).first()
    )
    if submission is None or submission.run is None:
        return False
    run = submission.run
    if run.status not in RunStatus.finished():
        return False
    with transaction.atomic():
        changed = Submission.objects.filter(
            pk=submission.pk, run_finished_noted_at__isnull=True
        ).update(run_finished_noted_at=timezone.now())
        if not changed:
            return False
        _audit(
            action=AuditAction.RUN_FINISHED,
            sandbox=submission.sandbox,
            submission=submission,
            label="sandbox",
            sha256=run.code_sha256,
            note=run.message,
            data={"run_id": str(run.pk), "status": run.status, "outcome": run.outcome},
        )
    _after_commit(submission, webhook_event="run.finished")
    return True


def submissions_note_finished_runs() -> int:
    """Note every approved submission whose run ended without being noted (a missed callback)."""
    ids = list(
        Submission.objects.filter(
            run__isnull=False,
            run_finished_noted_at__isnull=True,
            run__status__in=RunStatus.finished(),
        ).values_list("pk", flat=True)
    )
    return sum(submission_note_run_finished(submission_id=pk) for pk in ids)


# Audit of catalog changes and of every run (received here: the catalog never imports reviews)


@receiver(catalog_changed)
def _on_catalog_changed(
    *,
    sandbox: Sandbox,
    actor: AbstractBaseUser | None,
    action: str,
    target: str,
    changes: dict[str, Any],
    note: str = "",
    sha256: str = "",
    **_kwargs: Any,
) -> None:
    """Record a catalog change: who, when, what, before → after."""
    if action not in AuditAction.values:
        logger.warning("catalog change %r has no audit action; recorded as tool_changed", action)
        action = AuditAction.TOOL_CHANGED
    _audit(
        sandbox=sandbox,
        action=action,
        user=actor,
        sha256=sha256,
        note=note,
        data={"target": target, "changes": changes},
    )


@receiver(run_created)
def _on_run_created(*, run: Run, user: AbstractBaseUser | None, **_kwargs: Any) -> None:
    """Record every run with who started it and the SHA-256 of its code, whatever the surface."""
    _audit(
        sandbox=run.sandbox,
        action=AuditAction.RUN_CREATED,
        user=user,
        sha256=run.code_sha256,
        note=f"{run.source} run of {run.language} code",
        data={"run_id": str(run.pk), "source": run.source, "language": run.language},
    )


# A reviewer's edit: read as the gate reads a submission, and approved only on that reading


@dataclass(frozen=True)
class EditReading:
    """An edited script as the gate reads it: violations, the tools it calls, its changes."""

    body: str
    violations: list[str]
    tools_called: list[dict[str, Any]]
    tools_added: list[str]  # tools the edit calls (or may call) that the agent's script did not
    diff: str  # unified diff from the agent's script to the edit; empty when unchanged

    @property
    def edited(self) -> bool:
        """Tell whether the edit differs from the agent's script."""
        return bool(self.diff)


def submission_edit_read(*, submission: Submission, body: str) -> EditReading:
    """Read a reviewer's edit with the validator and the gate, and diff it against the agent's."""
    body = normalise_body(body)
    if body == submission.body:
        # The agent's script: the reading stored at submission is what the policy decided on.
        return EditReading(body, list(submission.violations), submission.tools_called, [], "")
    script, violations = script_check(
        sandbox=submission.sandbox, body=body, language=submission.language
    )
    tools = run_tools_called(
        sandbox=submission.sandbox, body=body, language=submission.language, script=script
    )
    before = {t["name"] for t in submission.tools_called}
    return EditReading(
        body=body,
        violations=violations,
        tools_called=tools,
        tools_added=[t["name"] for t in tools if t["name"] not in before],
        diff=unified_diff(
            submission.body, body, old_name="agent's script", new_name="reviewer's edit"
        ),
    )


class EditToolsUnseen(ReviewConflict):
    """The edit calls tools the reviewer was not shown when approving; nothing was approved."""

    def __init__(self, reading: EditReading, unseen: list[str]) -> None:
        super().__init__(
            "edit_tools_unseen",
            f"The edited script calls {', '.join(unseen)}, which the list of tools you saw "
            "did not show. Check the tools it calls, then approve again.",
        )
        self.reading = reading
        self.unseen = unseen


def submission_approve_edit(
    *,
    submission: Submission,
    user: AbstractBaseUser,
    body: str,
    tools_seen: list[str],
    note: str = "",
) -> Submission:
    """Approve a reviewer's edit, decided on the edit's own reading; audit its diff and tools."""
    submission = submission_refresh(submission=submission)
    submission_decide_check(submission=submission, user=user)
    _check_not_own(submission=submission, user=user)
    reading = submission_edit_read(submission=submission, body=body)
    if not reading.edited:
        return submission_approve(submission=submission, user=user, note=note)
    # The page showed the tools of whatever text the reviewer last paused on; an approval
    # must not cover a tool call typed after that (or sent by a page that never updated).
    unseen = sorted({t["name"] for t in reading.tools_called} - set(tools_seen))
    if unseen and not reading.violations:
        raise EditToolsUnseen(reading, unseen)
    with transaction.atomic():
        approved = submission_approve(submission=submission, user=user, body=body, note=note)
        names = [t["name"] for t in reading.tools_called]
        extra = {
            AuditAction.EDITED: {
                "diff": reading.diff,
                "original_tools": [t["name"] for t in submission.tools_called],
                "tools_called": reading.tools_called,
                "tools_added": reading.tools_added,
            },
            AuditAction.EDITED_AND_APPROVED: {"tools_approved": names},
        }
        for entry in AuditEntry.objects.filter(submission=approved, action__in=list(extra)):
            entry.data = {**entry.data, **extra[entry.action]}
            entry.save(update_fields=["data"])
    return approved
