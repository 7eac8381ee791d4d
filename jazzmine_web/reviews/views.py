"""Review pages: the live queue, one submission with its decision, the audit trail, webhooks."""

from __future__ import annotations

import csv
from typing import Any
from urllib.parse import urlencode
from uuid import UUID

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from jazzmine.jsontext import json_shown

from ..catalog.selectors import sandbox_for_user, sandboxes_for_user
from ..studio.http import FORM_REFUSED
from ..studio.untrusted import id_number
from ..teams.models import Role
from ..teams.selectors import api_tokens_for_user, api_tokens_listed, user_has_team_role
from . import selectors, services, webhooks
from .models import AuditAction, ReviewPolicy, Submission


def queue_filters(params: Any) -> dict[str, Any]:
    """Return the queue's filters from query parameters."""
    age = params.get("age", "")
    return {
        "sandbox_id": id_number(params.get("sandbox")),
        "age": age if age in selectors.AGE_FILTERS else "",
    }


def queue_filter_query(filters: dict[str, Any]) -> str:
    """Return the queue's filters as the query string of its page and its socket."""
    query = {"sandbox": filters["sandbox_id"], "age": filters["age"]}
    return urlencode({k: v for k, v in query.items() if v not in (None, "")})


@require_GET
def queue(request: HttpRequest) -> HttpResponse:
    """List the submissions waiting for review; the page follows the queue over a websocket."""
    services.submissions_expire_overdue()
    filters = queue_filters(request.GET)
    context = {
        "submissions": selectors.review_queue(request.user, **filters),
        "filters": filters,
        "filter_query": queue_filter_query(filters),
        "sandboxes": sandboxes_for_user(request.user),
        "ages": [(key, label) for key, (label, _n, _o) in selectors.AGE_FILTERS.items()],
        "pending_count": selectors.pending_review_count(request.user),
        "viewer_id": request.user.pk,
    }
    template = "reviews/queue.html"
    if request.htmx and request.htmx.target in ("queue-live", "queue-table"):
        template += f"#{request.htmx.target}"
    return render(request, template, context)


def _submission_or_404(request: HttpRequest, submission_id: UUID) -> Submission:
    found = selectors.submission_for_user(request.user, submission_id)
    if found is None:
        raise Http404("No such submission")
    return services.submission_refresh(submission=found)


def _review_context(request: HttpRequest, submission: Submission, **extra: Any) -> dict[str, Any]:
    team = submission.sandbox.team
    is_reviewer = user_has_team_role(user=request.user, team=team, role=Role.REVIEWER)
    own = submission.submitted_by_id == request.user.pk
    return {
        "submission": submission,
        "run": submission.run,
        "is_reviewer": is_reviewer,
        "own_submission": own,
        "can_decide": is_reviewer and submission.is_pending,
        "can_approve": is_reviewer and submission.is_pending and not own,
        "audit": submission.audit.select_related("actor_user").order_by("created_at", "pk"),
        **selectors.submission_review_context(submission),
        **extra,
    }


@require_GET
def review(request: HttpRequest, submission_id: UUID) -> HttpResponse:
    """Show one submission: task, prompt, script, tools, diff, agent, decision and run."""
    submission = _submission_or_404(request, submission_id)
    template = "reviews/review.html"
    if request.htmx and request.htmx.target == "decision-panel":
        template += "#decision-panel"
    return render(request, template, _review_context(request, submission))


def _decided(
    request: HttpRequest,
    submission: Submission,
    *,
    error: services.ReviewError | None = None,
    **extra: Any,
) -> HttpResponse:
    """Answer a decision form: the decision panel for htmx, the page or a redirect otherwise."""
    if request.htmx:
        # htmx swaps only 2xx answers: the panel itself carries the error. The tools panel
        # comes along out of band, so it always shows the reading the decision was made on.
        context = _review_context(request, submission, error=error, **extra)
        return render(request, "reviews/_decided.html", context)
    if error is not None:
        context = _review_context(request, submission, error=error, **extra)
        return render(request, "reviews/review.html", context, status=error.status)
    return redirect("reviews:review", submission_id=submission.pk)


@require_POST
def decide(request: HttpRequest, submission_id: UUID, action: str) -> HttpResponse:
    """Approve, edit-and-approve or reject a submission."""
    submission = _submission_or_404(request, submission_id)
    try:
        if action == "approve":
            services.submission_approve(
                submission=submission,
                user=request.user,
                note=request.POST.get("note", ""),
                # What the page listed when it was drawn: the reading may have been refreshed
                # since (another approval found a new tool). A form without it: the stored one.
                tools_seen=(
                    request.POST.getlist("tools_seen")
                    if "tools_seen_sent" in request.POST
                    else None
                ),
                # The tools its confirmation asked about (None: those the reading needs review for).
                tools_asked=_tools_asked(request),
                tools_digests=_tools_digests(request),
            )
        elif action == "edit":
            services.submission_approve_edit(
                submission=submission,
                user=request.user,
                body=request.POST.get("body", ""),
                # Only what the page showed: a form without the list saw the agent's tools.
                tools_seen=(
                    request.POST.getlist("tools_seen")
                    if "tools_seen_sent" in request.POST
                    else [t["name"] for t in submission.tools_called]
                ),
                # The tools its panel showed as needing review, for the text it last read (None:
                # only what the stored reading asked about counts as asked).
                tools_asked=_tools_asked(request),
                tools_digests=_tools_digests(request),
                note=request.POST.get("note", ""),
            )
        elif action == "reject":
            services.submission_reject(
                submission=submission, user=request.user, feedback=request.POST.get("feedback", "")
            )
        else:
            raise Http404("No such decision")
    except services.ReviewForbidden as exc:
        if not user_has_team_role(
            user=request.user, team=submission.sandbox.team, role=Role.MEMBER
        ):
            raise Http404("No such submission") from exc
        return _decided(request, submission, error=exc)
    except services.EditRefused as exc:
        try:
            reading = services.submission_edit_read(
                submission=submission, body=request.POST.get("body", "")
            )
        except services.ScriptUnchecked as unread:
            return _decided(request, submission, error=unread)
        return _decided(
            request,
            submission,
            error=exc,
            edit_body=request.POST.get("body", ""),
            edit_violations=exc.violations,
            edit_open=True,
            **_edit_context(submission, reading),
        )
    except services.EditToolsUnseen as exc:
        # Show the edit's own reading, so the next approval is decided on it.
        return _decided(
            request,
            submission,
            error=exc,
            edit_body=exc.reading.body,
            edit_open=True,
            **_edit_context(submission, exc.reading),
        )
    except services.ReviewError as exc:
        return _decided(request, services.submission_refresh(submission=submission), error=exc)
    return _decided(request, services.submission_refresh(submission=submission))


def _tools_asked(request: HttpRequest) -> list[str] | None:
    """Return the tools a decision form says its page asked about; None when it sent no list."""
    return request.POST.getlist("tools_asked") if "tools_asked_sent" in request.POST else None


def _tools_digests(request: HttpRequest) -> dict[str, str] | None:
    """Return the code of each tool as a decision form's page read it ({name: code digest}).

    None when it sent none (a form from before pages sent them): the stored reading's then.
    """
    if "tools_digest_sent" not in request.POST:
        return None
    pairs = (value.partition("=") for value in request.POST.getlist("tools_digest"))
    return {name: digest for name, sep, digest in pairs if sep}


def _edit_context(submission: Submission, reading: services.EditReading) -> dict[str, Any]:
    return {
        "tools_reading": selectors.tools_reading(
            submission,
            tools_called=reading.tools_called,
            source="edit" if reading.edited else "agent",
            added=reading.tools_added,
        ),
        "edit_reading": reading,
    }


@require_POST
def edit_reading(request: HttpRequest, submission_id: UUID) -> HttpResponse:
    """Read a reviewer's edit as the gate will: the tools it calls, why, and its changes."""
    submission = _submission_or_404(request, submission_id)
    body = request.POST.get("body", "")
    if len(body) > services.MAX_BODY_CHARS:
        # Fail closed: a text the gate will not read cannot show a reading to approve on.
        return HttpResponse(status=413)
    try:
        reading = services.submission_edit_read(submission=submission, body=body)
    except services.ScriptUnchecked as exc:
        return HttpResponse(exc.message, status=exc.status, content_type="text/plain")
    return render(
        request,
        "reviews/_edit_reading.html",
        {"submission": submission, **_edit_context(submission, reading)},
    )


@require_GET
def queue_row(request: HttpRequest, submission_id: UUID) -> HttpResponse:
    """Render one queue row (what the live socket sends, for clients that fetch it)."""
    submission = _submission_or_404(request, submission_id)
    context = {"s": submission, "viewer_id": request.user.pk}
    return render(request, "reviews/queue.html#queue-row", context)


def audit_filters(params: Any) -> dict[str, Any]:
    """Return the audit page's filters from query parameters."""
    action = params.get("decision", "")
    return {
        "sandbox_id": id_number(params.get("sandbox")),
        "person_id": id_number(params.get("person")),
        "token_id": id_number(params.get("agent")),
        "action": action if action in AuditAction.values else "",
    }


@require_GET
def audit(request: HttpRequest) -> HttpResponse:
    """List the audit trail of the user's teams, filtered; `?format=csv` downloads it."""
    services.submissions_expire_overdue()
    filters = audit_filters(request.GET)
    entries = selectors.audit_entries(request.user, **filters)
    if request.GET.get("format") == "csv":
        return _audit_csv(entries)
    page = Paginator(entries, AUDIT_PAGE_SIZE).get_page(request.GET.get("page"))
    params = request.GET.copy()
    for key in [k for k, v in params.items() if k == "page" or not v]:
        params.pop(key)
    context = {
        "entries": page.object_list,
        "page": page,
        "filters": filters,
        "sandboxes": sandboxes_for_user(request.user),
        "people": selectors.audit_people(request.user),
        "agents": selectors.audit_agents(request.user),
        "actions": AuditAction.choices,
        "query": params.urlencode(),  # the filters, for the pager and the CSV link
    }
    template = "reviews/audit.html"
    if request.htmx and request.htmx.target == "audit-table":
        template += "#audit-table"
    return render(request, template, context)


AUDIT_PAGE_SIZE = 100


def _audit_csv(entries: Any) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="jazzmine-audit.csv"'
    writer = csv.writer(response)
    writer.writerow(
        [
            "when",
            "sandbox",
            "submission",
            "action",
            "actor",
            "person",
            "agent_token",
            "code_sha256",
            "note",
            "data",
        ]
    )
    for e in entries.iterator():
        row = [
            e.created_at.isoformat(),
            str(e.sandbox),
            str(e.submission_id or ""),
            e.action,
            e.actor_label,
            e.actor_user.get_username() if e.actor_user else "",
            e.actor_token.name if e.actor_token else "",
            e.code_sha256,
            e.note,
            json_shown(e.data or {}, sort_keys=True, default=str),
        ]
        # Every column: names, labels and notes all come from people or agents.
        writer.writerow([_csv_safe(str(cell)) for cell in row])
    return response


# A cell starting with one of these is a formula (or becomes one) in spreadsheets; full-width
# forms count because some spreadsheets fold them to ASCII before parsing.
_FORMULA_STARTS = frozenset("=+-@\t\r\n\uff1d\uff0b\uff0d\uff20\ufe62\ufe63\u2212")


def _csv_safe(text: str) -> str:
    """Make a cell inert: a leading apostrophe keeps spreadsheets from reading a formula."""
    stripped = text.lstrip(" \u3000\xa0")
    if stripped[:1] in _FORMULA_STARTS:
        return "'" + text
    return text


@require_http_methods(["GET", "POST"])
def policy(request: HttpRequest, pk: int) -> HttpResponse:
    """Show and change a sandbox's review policy and timeout (admins change it)."""
    sandbox = sandbox_for_user(request.user, pk)
    if sandbox is None:
        raise Http404("No such sandbox")
    settings_row = selectors.review_settings_for(sandbox)
    error, status = None, 200
    if request.method == "POST":
        try:
            services.review_settings_set(
                sandbox=sandbox,
                user=request.user,
                policy=request.POST.get("policy", ""),
                timeout_seconds=id_number(request.POST.get("timeout_seconds")) or 0,
            )
            messages.success(request, "Review policy saved.")
            return redirect("reviews:policy", pk=sandbox.pk)
        except services.ReviewForbidden as exc:
            error, status = exc.message, 403  # not theirs to change, whatever they send
        except services.ReviewError as exc:
            error, status = exc.message, FORM_REFUSED
    context = {
        "sandbox": sandbox,
        "settings": settings_row,
        "policies": ReviewPolicy.choices,
        "is_admin": user_has_team_role(user=request.user, team=sandbox.team, role=Role.ADMIN),
        "error": error,
    }
    return render(request, "reviews/policy.html", context, status=status)


@require_http_methods(["GET", "POST"])
def webhook_settings(request: HttpRequest) -> HttpResponse:
    """Set or clear the webhook of each of the user's tokens; list deliveries and attempts."""
    issued = None
    error = None
    if request.method == "POST":
        token = (
            api_tokens_for_user(request.user)
            .filter(pk=id_number(request.POST.get("token")))
            .first()
        )
        if token is None:
            raise Http404("No such token")
        if request.POST.get("action") == "clear":
            webhooks.webhook_clear(token=token)
        else:
            try:
                endpoint, secret = webhooks.webhook_set(
                    token=token, url=request.POST.get("url", "")
                )
                issued = {"token": token, "url": endpoint.url, "secret": secret}
            except services.ReviewError as exc:
                error = exc.message
    tokens = [t for t in api_tokens_listed(request.user) if t.revoked_at is None]
    endpoints = {t.pk: selectors.webhook_for_token(t) for t in tokens}
    context = {
        "tokens": [(t, endpoints[t.pk]) for t in tokens],
        "deliveries": selectors.webhook_deliveries_for_user(request.user),
        "issued": issued,
        "error": error,
    }
    return render(request, "reviews/webhooks.html", context, status=FORM_REFUSED if error else 200)
