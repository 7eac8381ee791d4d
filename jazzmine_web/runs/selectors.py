"""Reads for runs."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from ..catalog.selectors import sandboxes_for_user
from .models import Run, RunEvent, RunStatus


def runs_for_user(user: Any) -> QuerySet[Run]:
    """Return the runs in the sandboxes of the user's teams, newest first."""
    return Run.objects.filter(sandbox__in=sandboxes_for_user(user)).select_related(
        "sandbox", "sandbox__team", "created_by"
    )


def run_for_user(user: Any, run_id: Any) -> Run | None:
    """Return one run the user may see, or None."""
    return runs_for_user(user).filter(pk=run_id).first()


def run_events_after(run: Run | Any, after: int = 0) -> list[dict[str, Any]]:
    """Return the run's events with a sequence number above `after`, in order."""
    run_id = getattr(run, "pk", run)
    return [e.to_dict() for e in RunEvent.objects.filter(run_id=run_id, seq__gt=after)]


def run_history(
    user: Any, *, sandbox: str = "", status: str = "", source: str = ""
) -> QuerySet[Run]:
    """Return the user's runs, newest first, filtered by sandbox name, status and source."""
    runs = runs_for_user(user)
    if sandbox:
        runs = runs.filter(sandbox__name=sandbox)
    if status:
        runs = runs.filter(status=status)
    if source:
        runs = runs.filter(source=source)
    # The id breaks ties: runs created in the same instant keep their place across pages.
    return runs.order_by("-created_at", "-pk")


def run_state(run: Run) -> dict[str, Any]:
    """Return the JSON form of a run's state (for the API and the live page)."""
    return {
        "id": str(run.pk),
        "sandbox": run.sandbox.name,
        "status": run.status,
        "outcome": run.outcome,
        "message": run.message,
        "result": run.result,
        "error": run.error,
        "code_sha256": run.code_sha256,
        "backend": run.backend,
        "worker": run.worker,
        "warm": run.warm,
        "event_count": run.event_count,
        "created_at": run.created_at.isoformat(),
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "first_event_ms": run.first_event_ms,
        "duration_ms": run.duration_ms,
    }


def run_status_outcome(*, run_id: Any) -> tuple[str, str]:
    """Return a run's status and outcome (a run deleted while it ran counts as failed)."""
    found = Run.objects.filter(pk=run_id).values_list("status", "outcome").first()
    return found or (RunStatus.FAILED, "")
