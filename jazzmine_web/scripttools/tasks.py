"""Celery tasks for script tools: thin, each calls a service."""

from __future__ import annotations

from celery import shared_task

from ..studio.claims import rows_heartbeat
from ..workers.process import execute_claimed, kind_register, silence_counts
from .models import TrialRun, TrialState
from .services import trial_claim, trial_execute, trials_of_earlier_life_end, trials_reap

kind_register(
    "trial",
    beat=lambda *, worker, ids: rows_heartbeat(
        TrialRun.objects.filter(pk__in=ids, state=TrialState.RUNNING), worker=worker
    ),
    lost=trials_of_earlier_life_end,
)


@shared_task(name="scripttools.trial_execute")
def trial_run(trial_id: str) -> str | None:
    """Claim a queued trial and run it on this worker's Docker host."""
    return execute_claimed(
        "trial",
        trial_id,
        claim=lambda worker: trial_claim(trial_id=trial_id, worker=worker),
        work=lambda interrupt: trial_execute(trial_id=trial_id, interrupt=interrupt).status,
    )


@shared_task(name="scripttools.trials_reap")
def trials_lost_reap() -> int:
    """End trials whose worker went silent, or that no worker took."""
    return trials_reap(judge_silence=silence_counts())
