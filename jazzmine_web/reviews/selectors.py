"""Reads for reviews: the queue, one submission as agents and reviewers see it, the audit."""

from __future__ import annotations

import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet
from django.utils import timezone

from jazzmine.core.tools import ScriptGenerator
from jazzmine.core.tools.generator import script_body
from jazzmine.sandbox import Outcome

from ..catalog.models import Sandbox
from ..catalog.selectors import sandboxes_for_user
from ..runs.models import RunStatus, code_sha256
from ..runs.selectors import run_state
from ..studio.diffs import unified_diff
from ..teams.models import ApiToken, Role
from ..teams.selectors import team_ids_with_role
from .analysis import violation_body_lines
from .models import (
    AuditAction,
    AuditEntry,
    SandboxReviewSettings,
    Submission,
    SubmissionStatus,
    WebhookDelivery,
    WebhookEndpoint,
)

AnyUser = AbstractBaseUser | AnonymousUser

# Age filter of the queue: name → (newer than, older than) in seconds.
AGE_FILTERS: dict[str, tuple[str, int | None, int | None]] = {
    "": ("Any age", None, None),
    "lt10m": ("Newer than 10 minutes", 600, None),
    "gt10m": ("Older than 10 minutes", None, 600),
    "gt1h": ("Older than an hour", None, 3600),
    "gt1d": ("Older than a day", None, 86400),
}


def review_settings_for(sandbox: Sandbox) -> SandboxReviewSettings:
    """Return a sandbox's review settings, or the defaults (unsaved) when it has none."""
    found = SandboxReviewSettings.objects.filter(sandbox=sandbox).first()
    return found or SandboxReviewSettings(sandbox=sandbox)


def review_settings_locked(sandbox: Sandbox) -> SandboxReviewSettings:
    """Return a sandbox's review settings, their row locked until the transaction ends."""
    found = SandboxReviewSettings.objects.select_for_update().filter(sandbox=sandbox).first()
    return found or SandboxReviewSettings(sandbox=sandbox)


def submissions_for_user(user: AnyUser, *, role: str = Role.MEMBER) -> QuerySet[Submission]:
    """Return the submissions in the sandboxes of the teams where a user has `role`."""
    return Submission.objects.filter(
        sandbox__in=sandboxes_for_user(user, role=role)
    ).select_related(
        "sandbox", "sandbox__team", "api_token", "submitted_by", "decided_by", "run", "previous"
    )


def submission_for_user(user: AnyUser, submission_id: Any) -> Submission | None:
    """Return one submission the user may see, or None."""
    return submissions_for_user(user).filter(pk=submission_id).first()


def _waiting(now: datetime.datetime | None = None) -> Q:
    # Pending and not overdue: an overdue submission is expired even before the sweep says so.
    now = now or timezone.now()
    return Q(status=SubmissionStatus.PENDING) & (Q(expires_at__isnull=True) | Q(expires_at__gt=now))


def review_queue(
    user: AnyUser, *, sandbox_id: int | None = None, age: str = ""
) -> QuerySet[Submission]:
    """Return the submissions waiting for review that a user may see, oldest first."""
    now = timezone.now()
    rows = submissions_for_user(user).filter(_waiting(now))
    if sandbox_id is not None:
        rows = rows.filter(sandbox_id=sandbox_id)
    _label, newer, older = AGE_FILTERS.get(age, AGE_FILTERS[""])
    if newer is not None:
        rows = rows.filter(created_at__gte=now - datetime.timedelta(seconds=newer))
    if older is not None:
        rows = rows.filter(created_at__lte=now - datetime.timedelta(seconds=older))
    return rows.order_by("created_at")


def pending_review_count(user: AnyUser) -> int:
    """Return how many submissions wait for this user's review.

    Not what their own agents sent: they may not approve it, another reviewer must.
    """
    if not user.is_authenticated:
        return 0
    return (
        Submission.objects.filter(
            _waiting(), sandbox__team_id__in=team_ids_with_role(user=user, role=Role.REVIEWER)
        )
        .exclude(submitted_by_id=user.pk)
        .count()
    )


def submission_is_final(submission: Submission) -> bool:
    """Tell whether nothing more will happen to a submission (refused, or its run ended)."""
    if submission.status in SubmissionStatus.refused():
        return True
    if submission.status in SubmissionStatus.approved():
        return submission.run is not None and submission.run.status in RunStatus.finished()
    return False


def submission_retry_error(submission: Submission) -> str | None:
    """Return the error an agent's next prompt should quote as `previous_error`, if any."""
    status = submission.status
    if status == SubmissionStatus.REJECTED_BY_VALIDATOR:
        return ScriptGenerator.validation_error_message(list(submission.violations))
    if status == SubmissionStatus.REJECTED:
        return f"A human reviewer rejected the script. Their feedback:\n{submission.feedback}"
    if status == SubmissionStatus.EXPIRED:
        return submission.feedback or "No reviewer decided in time; the script did not run."
    run = submission.run
    if run is not None and run.status == RunStatus.FAILED:
        if submission_infrastructure_error(submission) is not None:
            return None  # the platform failed, not the script: nothing for a prompt to fix
        return run.error or run.message or "The script failed without an error message."
    return None


def submission_infrastructure_error(submission: Submission) -> str | None:
    """Return why a submission's run failed when the platform failed it, not its script."""
    run = submission.run
    if run is None or run.status != RunStatus.FAILED:
        return None
    try:
        infrastructure = Outcome(run.outcome).is_infrastructure
    except ValueError:
        return None
    return (run.message or run.error or run.outcome) if infrastructure else None


def submission_state(submission: Submission) -> dict[str, Any]:
    """Return the JSON form of a submission, as agents poll it."""
    run = submission.run
    token = submission.api_token
    return {
        "id": str(submission.pk),
        "status": submission.status,
        "final": submission_is_final(submission),
        "decided": submission.status != SubmissionStatus.PENDING,
        "sandbox": {
            "id": submission.sandbox_id,
            "team": submission.sandbox.team.slug,
            "name": submission.sandbox.name,
        },
        "task": submission.task,
        "language": submission.language,
        "attempt": submission.attempt,
        "previous_id": str(submission.previous_id) if submission.previous_id else None,
        "policy": submission.policy,
        "code_sha256": submission.code_sha256,
        # runs.services.script_assemble numbers them by body line already.
        "violations": list(submission.violations),
        "tools_called": submission.tools_called,
        "agent": {"token": token.name if token else None, "name": submission.agent_name},
        "created_at": submission.created_at.isoformat(),
        "expires_at": submission.expires_at.isoformat() if submission.expires_at else None,
        "decided_at": submission.decided_at.isoformat() if submission.decided_at else None,
        "decided_by": submission.decided_by.get_username() if submission.decided_by else None,
        "feedback": submission.feedback,
        "edited": submission.was_edited,
        "approved_body": submission.approved_body if submission.was_edited else None,
        "approved_sha256": submission.approved_sha256 or None,
        "previous_error": submission_retry_error(submission),
        # Set when the sandbox could not run the script at all (engine unreachable, image
        # build failed, worker lost): try again later as it is, do not rewrite the script.
        "infrastructure_error": submission_infrastructure_error(submission),
        "run": run_state(run) if run is not None else None,
        "urls": {
            "self": f"/api/v1/submissions/{submission.pk}/",
            "wait": f"/api/v1/submissions/{submission.pk}/wait/",
            "events": f"/api/v1/submissions/{submission.pk}/events/",
            "review": f"/reviews/{submission.pk}/",
        },
    }


def submission_review_context(submission: Submission) -> dict[str, Any]:
    """Return what the review page shows beyond the row: marked lines, tools, the diff."""
    marks = violation_body_lines(submission.violations)
    body = script_body(submission.script, submission.language)
    previous = submission.previous
    diff = ""
    if previous is not None:
        diff = unified_diff(
            script_body(previous.approved_script or previous.script, previous.language),
            body,
            old_name=f"attempt {previous.attempt}",
            new_name=f"attempt {submission.attempt}",
        )
    edit = submission_edit_record(submission)
    if edit is not None:
        tools = tools_reading(
            submission,
            tools_called=edit.get("tools_called", submission.tools_called),
            source="approved-edit",
            added=edit.get("tools_added", []),
        )
    else:
        tools = tools_reading(submission, tools_called=submission.tools_called, source="agent")
    return {
        "violation_lines": sorted(marks),
        "violations": list(submission.violations),
        "previous": previous,
        "previous_error": submission_retry_error(previous) if previous is not None else None,
        "diff": diff,
        "edit_diff": submission_edit_diff(submission),
        "approved_body": script_body(submission.approved_script, submission.language),
        "tools_reading": tools,
        "secrets": tools["secrets"],
        "needs_review_tools": tools["needs_review"],
        "body": body,
        "edit_body": body,  # the editor starts from the code that runs
        "same_script_before": submissions_of_the_same_script(submission),
        # The agent's answer held more than the code that runs (prose, a fence around it).
        "answer_differs": body.strip("\n") != submission.body.strip("\n"),
        "body_lines": max(1, len(body.splitlines())),
    }


# How many earlier decisions on the same script the review page lists (newest first).
SAME_SCRIPT_SHOWN = 5


def submissions_of_the_same_script(submission: Submission) -> list[Submission]:
    """Return earlier submissions of the same script to its sandbox, decided, newest first.

    An agent need not say its script is a retry (`previous`): one rejected with "do not
    cancel delivered orders", sent again as it was with another task, reached the next
    reviewer with no history, until one approved it. The same code (its SHA-256) or the
    same body as sent, whatever the task and whoever's token sent it.
    """
    same = Submission.objects.filter(sandbox_id=submission.sandbox_id).exclude(pk=submission.pk)
    same = same.filter(
        Q(code_sha256=submission.code_sha256) | Q(body_sha256=code_sha256(submission.body))
    )
    decided = same.exclude(status=SubmissionStatus.PENDING).filter(
        created_at__lte=submission.created_at
    )
    return list(decided.select_related("decided_by").order_by("-created_at")[:SAME_SCRIPT_SHOWN])


def tools_reading(
    submission: Submission,
    *,
    tools_called: list[dict[str, Any]],
    source: str,
    added: list[str] | None = None,
) -> dict[str, Any]:
    """Return the gate's reading of a script for the tools panel: which text, tools, secrets."""
    added_names = set(added or [])
    return {
        "source": source,  # "agent", "edit" (being typed) or "approved-edit"
        "tools": [{**t, "added": t["name"] in added_names} for t in tools_called],
        "names": [t["name"] for t in tools_called],
        "secrets": secrets_reachable(submission.sandbox, tools_called=tools_called),
        "needs_review": [t for t in tools_called if not t.get("always_allow")],
    }


def secrets_reachable(
    sandbox: Sandbox, *, tools_called: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Return the secrets a run of a script calling `tools_called` is handed, the sandbox's first.

    Each is {"name", "is_set", "sandbox": whether it is the sandbox's, "tools": whose alone it
    is otherwise}. The sandbox's own secrets go into the run's process environment before
    the script's first line (the harness and the bash runner alike), whatever it calls, no
    tool included: every tool's for the whole run, so they are listed for every script. A
    secret only tools declare reaches a reviewed run only for the tools its approval lets it
    call (`runs.preparation._run_secrets`), which are the tools this reading lists.

    None is said to be withheld: the gate that withholds secrets from unaccepted code or
    wheels decides when the run starts, and an admin's acceptance before then releases them,
    so "withheld" here could claim less than the run gets.
    """
    shared = set(sandbox.secret_names)
    own: dict[str, set[str]] = {}
    for tool in tools_called:
        for name in tool.get("secrets", []):
            if name not in shared:  # the sandbox's too: every tool's, not this tool's alone
                own.setdefault(name, set()).add(tool["name"])
    set_names = set(sandbox.secret_values.values_list("name", flat=True))
    listed = [(name, True, []) for name in sorted(shared)]
    listed += [(name, False, sorted(own[name])) for name in sorted(own)]
    return [
        {"name": name, "is_set": name in set_names, "sandbox": of_sandbox, "tools": tools}
        for name, of_sandbox, tools in listed
    ]


def submission_edit_diff(submission: Submission) -> str:
    """Return the diff from the agent's script to the reviewer's approved edit, if edited."""
    if not submission.was_edited:
        return ""
    return unified_diff(
        script_body(submission.script, submission.language),
        script_body(submission.approved_script, submission.language),
        old_name="agent's script",
        new_name="reviewer's edit",
    )


def submission_edit_record(submission: Submission) -> dict[str, Any] | None:
    """Return what the audit stored about a reviewer's edit (diff, tools), if edited."""
    if not submission.was_edited:
        return None
    entry = (
        AuditEntry.objects.filter(submission=submission, action=AuditAction.EDITED)
        .order_by("-created_at", "-pk")
        .first()
    )
    return entry.data if entry is not None else None


def audit_entries(
    user: AnyUser,
    *,
    sandbox_id: int | None = None,
    person_id: int | None = None,
    token_id: int | None = None,
    action: str = "",
) -> QuerySet[AuditEntry]:
    """Return the audit entries of the user's teams, newest first, filtered."""
    rows = AuditEntry.objects.filter(sandbox__in=sandboxes_for_user(user)).select_related(
        "sandbox", "actor_user", "actor_token", "submission"
    )
    if sandbox_id is not None:
        rows = rows.filter(sandbox_id=sandbox_id)
    if person_id is not None:
        rows = rows.filter(actor_user_id=person_id, actor_token__isnull=True)
    if token_id is not None:
        rows = rows.filter(Q(actor_token_id=token_id) | Q(submission__api_token_id=token_id))
    if action:
        rows = rows.filter(action=action)
    return rows


def audit_people(user: AnyUser) -> list[tuple[int, str]]:
    """Return (id, username) of the people who appear in the user's audit trail."""
    rows = (
        audit_entries(user)
        .filter(actor_user__isnull=False, actor_token__isnull=True)
        .values_list("actor_user_id", "actor_user__username")
        .distinct()
    )
    return sorted(set(rows), key=lambda r: r[1])


def audit_agents(user: AnyUser) -> list[ApiToken]:
    """Return the tokens that submitted into the user's sandboxes."""
    ids = submissions_for_user(user).exclude(api_token=None).values_list("api_token_id", flat=True)
    return list(ApiToken.objects.filter(pk__in=set(ids)).select_related("user"))


def webhook_for_token(token: ApiToken) -> WebhookEndpoint | None:
    """Return a token's webhook, if it has one."""
    return WebhookEndpoint.objects.filter(api_token=token).first()


def webhook_deliveries_for_user(user: AnyUser, *, limit: int = 50) -> QuerySet[WebhookDelivery]:
    """Return the recent deliveries to the webhooks of a user's tokens, with their attempts."""
    return (
        WebhookDelivery.objects.filter(endpoint__api_token__user=user)
        .select_related("endpoint", "endpoint__api_token", "submission")
        .prefetch_related("attempts")[:limit]
    )


def webhook_deliveries_for_token(token: ApiToken, *, limit: int = 50) -> QuerySet[WebhookDelivery]:
    """Return the recent deliveries to one token's webhook, with their attempts."""
    return WebhookDelivery.objects.filter(endpoint__api_token=token).prefetch_related("attempts")[
        :limit
    ]
