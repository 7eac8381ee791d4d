"""Run pages: a permanent page per run, and the run history."""

from __future__ import annotations

from urllib.parse import urlencode
from uuid import UUID

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from ..catalog.selectors import sandboxes_for_user
from .lifecycle import run_cancel, run_may_cancel, run_wait_notice
from .models import Run, RunStatus
from .selectors import run_for_user, run_history


@require_GET
def run_detail(request: HttpRequest, run_id: UUID) -> HttpResponse:
    """Show one run: its script, status and events, live while it runs."""
    run = run_for_user(request.user, run_id)
    if run is None:
        raise Http404("No such run")
    # A stop asked already is said instead of offered again (a second press changed nothing):
    # by the pane's notice (`run_wait_notice`), which the page asks for again while it is live.
    may_cancel = (
        not run.is_finished and not run.cancel_reason and run_may_cancel(run=run, user=request.user)
    )
    context = {"run": run, "may_cancel": may_cancel, "wait_notice": run_wait_notice(run=run)}
    return render(request, "runs/detail.html", context)


@require_GET
def run_wait_view(request: HttpRequest, run_id: UUID) -> HttpResponse:
    """Say why a live run has waited long, for its pane to show while it is open.

    A pane asks every few seconds while its run is live (`runs/_output.html#run-wait`); the
    answer for an ended run asks no more. Said only on a page's load before: a run queued
    with no worker, or whose worker went silent, showed "Queued" or "Running" and nothing else
    for as long as the page stayed open.
    """
    run = run_for_user(request.user, run_id)
    if run is None:
        raise Http404("No such run")
    context = {"run": run, "live": not run.is_finished, "wait_notice": run_wait_notice(run=run)}
    return render(request, "runs/_output.html#run-wait", context)


@require_POST
def run_cancel_view(request: HttpRequest, run_id: UUID) -> HttpResponse:
    """Stop a run (its sandbox within a second), then show its page."""
    run = run_for_user(request.user, run_id)
    if run is None:
        raise Http404("No such run")
    if not run_may_cancel(run=run, user=request.user):
        return HttpResponseForbidden(
            "Only the person who started a run, or an admin of its team, may cancel it."
        )
    if not run_cancel(run=run, user=request.user):  # one that has ended is left as it is
        run.refresh_from_db(fields=["status"])
        messages.info(request, _not_cancelled(run))
    return redirect("runs:detail", run_id=run.pk)


def _not_cancelled(run: Run) -> str:
    """Say why a Cancel changed nothing: the run had ended, or a stop was asked already."""
    if run.is_finished:
        return f"The run had already ended ({run.get_status_display().lower()}): nothing to cancel."
    return "A stop was asked already: the run ends as soon as its worker stops the sandbox."


# A page of the history: enough to scan, small enough to render fast.
RUNS_PER_PAGE = 50


@require_GET
def run_list(request: HttpRequest) -> HttpResponse:
    """List the user's runs a page at a time, filtered by sandbox, status and source."""
    filters = {
        "sandbox": request.GET.get("sandbox", ""),
        "status": request.GET.get("status", ""),
        "source": request.GET.get("source", ""),
    }
    paginator = Paginator(run_history(request.user, **filters), RUNS_PER_PAGE)
    page = paginator.get_page(request.GET.get("page"))
    context = {
        "runs": page.object_list,
        "page": page,
        "filters": filters,
        # Page links keep the filters: only the ones set, so the URLs stay short.
        "filter_query": urlencode({k: v for k, v in filters.items() if v}),
        "sandboxes": sandboxes_for_user(request.user),
        "statuses": RunStatus.choices,
    }
    template = "runs/list.html"
    if request.htmx and request.htmx.target == "run-table":
        template += "#run-table"
    return render(request, template, context)
