"""Deciding: who may decide on a pending submission, and its approval or rejection."""

from __future__ import annotations

import datetime
from collections.abc import Collection, Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from jazzmine.core.tools.generator import plain_newlines, script_body

from ...runs.models import code_sha256
from ...runs.services import run_tools_called, script_check
from ...teams.auth import token_still_active
from ...teams.models import Membership, Role
from ...teams.selectors import user_has_team_role, user_holds_team_role_locked
from ..analysis import same_body
from ..models import AuditAction, Submission, SubmissionStatus
from .audit import _audit
from .errors import (
    EditRefused,
    ReviewConflict,
    ReviewForbidden,
    SubmissionInvalid,
    ToolsChanged,
    refused_unless_checked,
)
from .expiry import submissions_expire_overdue
from .submitting import MAX_BODY_CHARS, _after_commit, _approve_and_start


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


def _check_token_opens(*, submission: Submission) -> None:
    """Refuse to run what an agent's token sent once that token no longer opens the API.

    A revoke withdraws the token's pending submissions, and so does a delete; a write that
    revoked nothing (a bulk password update, a deactivation by SQL) leaves them waiting until
    the sweep revokes the token (`api_tokens_settle`): until then they are refused here.
    """
    # Every submission comes through the API with a token: none is left only when the token
    # (or its owner's account) was deleted, which ends its authority as a revoke does.
    if submission.api_token_id is None or not token_still_active(submission.api_token_id):
        raise ReviewConflict(
            "token_ended",
            "The API token that submitted this script no longer opens the API (revoked or "
            "deleted, its owner's password changed or their account was deactivated or "
            "deleted): it is not run.",
        )


def _check_submitter_in_team(*, submission: Submission) -> None:
    """Refuse to run what an agent sent once its owner is no longer in the sandbox's team.

    Leaving the team withdraws their pending submissions (`reviews.services.withdrawing`);
    this covers a removal that sent no signal (a bulk delete, SQL). Fail closed: an owner
    the database no longer knows is refused.
    """
    user_id = submission.submitted_by_id
    if (
        user_id is not None
        and Membership.objects.filter(user_id=user_id, team_id=submission.sandbox.team_id).exists()
    ):
        return
    raise ReviewConflict(
        "submitter_left",
        "The person whose agent submitted this script is no longer in this team (removed, or "
        "their account deleted): it is not run.",
    )


def _claim(
    *, submission: Submission, status: str, user: AbstractBaseUser, feedback: str = ""
) -> None:
    """Move a pending submission to a decision, or fail if someone (or the clock) got there first.

    The reviewer's role is read again here, under lock, in the decision's transaction: the check
    before it (`submission_decide_check`) may be stale by the time an edit has been validated.
    """
    if not user_holds_team_role_locked(user=user, team=submission.sandbox.team, role=Role.REVIEWER):
        raise ReviewForbidden("not_reviewer", "Only reviewers of this team decide on submissions.")
    now = timezone.now()
    claimed = Submission.objects.filter(
        pk=submission.pk, status=SubmissionStatus.PENDING, expires_at__gt=now
    ).update(status=status, decided_at=now, decided_by=user, feedback=feedback)
    if not claimed:
        raise ReviewConflict("already_decided", "This submission was decided or expired meanwhile.")
    submission.status, submission.decided_at = status, now
    submission.decided_by, submission.feedback = user, feedback


def edit_body_checked(body: str) -> str:
    """Return a reviewer's edit; refuse, unread, one longer than an agent's script may be.

    Every reading of a big script waits for the one checker process: an edit of megabytes
    would hold it (and every big script behind it) for as long as it may take.
    """
    if len(body) > MAX_BODY_CHARS:
        raise SubmissionInvalid(
            "invalid_field",
            f"The edited script is {len(body):,} characters long; "
            f"a script may hold at most {MAX_BODY_CHARS:,}.",
        )
    return body


@refused_unless_checked
def submission_approve(
    *,
    submission: Submission,
    user: AbstractBaseUser,
    body: str | None = None,
    note: str = "",
    tools_seen: Collection[str] | None = None,
    tools_asked: Collection[str] | None = None,
    tools_digests: Mapping[str, str] | None = None,
) -> Submission:
    """Approve a pending script, or a reviewer's edit of it (validated again), and start its run.

    The script is read again against the sandbox's tools of now: the approval covers, and
    its run may call, only tools the reviewer was shown, and was asked about when they need
    review (`_reading_check`, for the agent's script and an edit alike). `tools_seen` is
    what the page listed (None: the reading stored with the submission, or for an edit, its
    own reading of now), and `tools_asked` the ones it showed as needing review (None: those
    the stored reading says need it, or for an edit with no `tools_seen` either, those its
    own reading of now says need it). `tools_digests` is the code each tool had when the page
    read it ({name: code_digest}; None: the stored reading's): a tool whose code changed since
    is refused like one that appeared. The run is bound to that code: the worker drops a tool
    whose code changes while the run waits (`runs.preparation`).
    """
    submission = submission_refresh(submission=submission)
    submission_decide_check(submission=submission, user=user)
    _check_not_own(submission=submission, user=user)
    _check_token_opens(submission=submission)
    _check_submitter_in_team(submission=submission)
    # The reviewer read (and may have edited) the body that runs, not the agent's raw answer.
    shown = script_body(submission.script, submission.language)
    final_body = shown if body is None else plain_newlines(edit_body_checked(body))
    edited = not same_body(final_body, shown)
    if edited and not final_body.strip():
        raise SubmissionInvalid("missing_field", "The edited script is empty.")
    # Assembled again with the sandbox's tools of now, edited or not: a Python script's
    # preamble lists every tool, so the one stored when the agent sent it is stale as soon as
    # any tool changes, and the run (which assembles with today's tools) would never match it.
    # Which tools the body reaches is checked just below; what a tool's code does is the
    # catalog's acceptance. An unedited body the sandbox's tools no longer accept is refused
    # here, as its run would be.
    script, violations = script_check(
        sandbox=submission.sandbox, body=final_body, language=submission.language
    )
    if violations:
        raise EditRefused(violations)
    # What the script calls depends on which tools exist, and that changes while it waits: a
    # bash script that reaches `wipe_orders` through a function it unsets reads as calling
    # no such tool until a member creates one of that name. Read it now, as it would run (a
    # Python body assembled with today's tools).
    tools = run_tools_called(
        sandbox=submission.sandbox, body=final_body, language=submission.language, script=script
    )
    seen = _reading_check(
        submission=submission,
        tools=tools,
        tools_seen=tools_seen,
        tools_asked=tools_asked,
        tools_digests=tools_digests,
        edited=edited,
    )
    approved_tools = {t["name"]: t["code_digest"] for t in tools if t["name"] in seen}
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
            data={"tools_approved": sorted(approved_tools), "tools_code": approved_tools},
        )
        _approve_and_start(
            submission=submission,
            body=final_body,
            script=script,
            user=user,
            source="review",
            approved_tools=approved_tools,
        )
    _after_commit(submission, webhook_event="submission.decided")
    return submission_refresh(submission=submission)


def _reading_check(
    *,
    submission: Submission,
    tools: list[dict[str, Any]],
    tools_seen: Collection[str] | None,
    tools_asked: Collection[str] | None = None,
    tools_digests: Mapping[str, str] | None = None,
    edited: bool = False,
) -> set[str]:
    """Return the tools the reviewer was shown, or refuse when the reading now reaches others.

    One check for the agent's script and a reviewer's edit of it (`edited`): they differ only
    in which reading their page listed. For the agent's script, shown means listed by the
    reading stored with the submission (what every review page renders) and, when the page
    sent its list, on that page too: a page loaded before the reading was refreshed approves
    nothing it did not show. For an edit, the page listed the reading of the text typed
    (fetched as it is typed, stored nowhere): its own list is all there is.

    A tool that needs review now and was not asked about is refused too: the page names as
    needing review only the tools that need it, so one it showed as always allowed (its code
    changed since an admin accepted it, or an admin took the mark away) was never asked.
    Which were asked is what the page sent, when it did: the stored reading is refreshed by
    another reviewer's refused approval, and a page drawn before that would otherwise send
    the same form as one drawn after. A form that sent no list is taken to have asked what
    the stored reading asked (the page it came from was drawn from that), and nothing more:
    a tool only an edit calls is refused until a page that says it asked is sent.

    On refusal of the agent's script the submission stays pending with the new reading
    stored, so every page now shows what approval would let the script call; an edit's
    refusal leaves the stored reading (the agent's script's) as it is. Nothing else changes.

    The same holds of each tool's code: one whose code is no longer what the page read (its
    `tools_digests`, or for the agent's script without them, the stored reading's) is refused,
    as what the reviewer decided on is not what would run. A reading stored before readings
    named the code, or an edit's page that sent none, is taken as read now.
    """
    stored = {t["name"]: t for t in submission.tools_called}
    if not edited:
        seen = set(stored) if tools_seen is None else set(stored) & set(tools_seen)
    elif tools_seen is None:
        # A caller that is no page (a direct call) vouches for the edit's reading of now.
        seen = {t["name"] for t in tools}
    else:
        seen = set(tools_seen)
    if tools_asked is not None:
        asked = set(tools_asked)
    elif edited and tools_seen is None:
        asked = {t["name"] for t in tools if not t["always_allow"]}
    else:
        asked = {name for name, t in stored.items() if not t.get("always_allow")}
    appeared = sorted(t["name"] for t in tools if t["name"] not in seen)
    if tools_digests is not None:
        read: Mapping[str, Any] = tools_digests
    else:
        read = {} if edited else {name: t.get("code_digest") for name, t in stored.items()}
    # A page that sent its digests but none readable for a tool it listed said nothing of that
    # tool's code: it is refused as recoded (the page drawn again names it).
    recoded = sorted(
        t["name"]
        for t in tools
        if t["name"] in seen
        and (
            read.get(t["name"]) not in (None, t["code_digest"])
            or (tools_digests is not None and t["name"] not in tools_digests)
        )
    )
    unasked = sorted(
        t["name"]
        for t in tools
        if t["name"] in seen and not t["always_allow"] and t["name"] not in asked
    )
    # Which of those the page showed as always allowed: every one, when it sent its list (it
    # names every tool it shows as needing review); without it, those the stored reading says.
    no_longer_allowed = [
        name
        for name in unasked
        if tools_asked is not None or stored.get(name, {}).get("always_allow")
    ]
    if appeared or unasked or recoded:
        if not edited:
            Submission.objects.filter(pk=submission.pk, status=SubmissionStatus.PENDING).update(
                tools_called=tools
            )
            submission.tools_called = tools
            _after_commit(submission, webhook_event=None)
        raise ToolsChanged(
            appeared=appeared,
            no_longer_allowed=no_longer_allowed,
            unasked=[name for name in unasked if name not in no_longer_allowed],
            recoded=recoded,
        )
    return seen


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
