"""Run pages: a permanent page per run, and the run history."""

from __future__ import annotations

from uuid import UUID

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ..catalog.selectors import sandboxes_for_user
from .models import RunStatus
from .selectors import run_for_user, run_history


@require_GET
def run_detail(request: HttpRequest, run_id: UUID) -> HttpResponse:
    """Show one run: its script, status and events, live while it runs."""
    run = run_for_user(request.user, run_id)
    if run is None:
        raise Http404("No such run")
    return render(request, "runs/detail.html", {"run": run})


@require_GET
def run_list(request: HttpRequest) -> HttpResponse:
    """List the user's runs, filtered by sandbox, status and source."""
    filters = {
        "sandbox": request.GET.get("sandbox", ""),
        "status": request.GET.get("status", ""),
        "source": request.GET.get("source", ""),
    }
    context = {
        "runs": run_history(request.user, **filters),
        "filters": filters,
        "sandboxes": sandboxes_for_user(request.user),
        "statuses": RunStatus.choices,
    }
    template = "runs/list.html"
    if request.htmx and request.htmx.target == "run-table":
        template += "#run-table"
    return render(request, template, context)
