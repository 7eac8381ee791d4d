"""A run's life across processes: queued by a web process, claimed and kept alive by a worker.

Every step is a conditional update on the run's row, so the database decides who owns a run:
two deliveries of one task, a reaper and a worker, or two reapers can never both act on it.
"""

from __future__ import annotations

import datetime
import functools
import logging
import uuid
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from jazzmine.sandbox import Outcome

from ..studio.claims import heartbeat_cutoff, never_started_cutoff, row_claim
from ..studio.hotrows import Rows
from ..teams.auth import token_still_active
from ..teams.models import ROLE_RANK, USER_MEMBERSHIPS, Role
from ..teams.selectors import team_ids_with_role
from ..workers.services import workers_alive, workers_broadcast
from . import services
from .models import Run, RunStatus

logger = logging.getLogger(__name__)

ACTIVE = (RunStatus.PREPARING, RunStatus.RUNNING)
# Every run's claim reads and sets this shape on its way to the sandbox (`studio.hotrows`).
CLAIMABLE = Rows(Run, where=("id", "status", "cancel_reason"))


def run_claim(
    *,
    run_id: Any,
    worker: str,
    running: bool = False,
    at: datetime.datetime | None = None,
    **started: Any,
) -> bool:
    """Make a queued run this worker's; False when another worker (or a cancel) got it first.

    With `running` the claim stores RUNNING (and `started`: its backend and image) at once,
    for a run that can start now; else PREPARING. The claim is not announced: watchers hear
    `running` a few milliseconds later, or `preparing` with the reason when there is
    something to wait for (an image to build). One message fewer through the channel layer
    and every watcher, on the way to the first event. `at` is the claim's time, stored as
    `claimed_at`: the mark by which a worker knows its own claim (`run_claimed_by`).
    """
    now = at or timezone.now()
    changes: dict[str, Any] = {"status": RunStatus.PREPARING, "claimed_at": now}
    if running:
        changes.update(started, status=RunStatus.RUNNING, started_at=now)
    claimable = functools.partial(CLAIMABLE.update, run_id, RunStatus.QUEUED, "")
    return row_claim(claimable, worker=worker, now=now, **changes)


# The role of the person whose decision lets a run through, by where the run came from: a
# reviewer approved a reviewed script; any other run is its member's own (the playground's
# Run, an agent's token under a policy that needed nobody).
DECIDER_ROLE = {"review": Role.REVIEWER}


DELETED_DECIDER = "the account that let it through was deleted"
TOKEN_ENDED = (
    "the API token that sent it no longer opens the API (revoked or deleted, or its owner's "
    "password changed or account was deactivated)"
)


@functools.cache
def _people() -> Rows[Any]:
    return Rows(get_user_model(), where=("id",))


def run_decider_refusal(*, run: Run, team_id: int) -> str:
    """Say why the person who let a run through no longer may ("" when they still may).

    A run goes on its person's authority, which can end while it waits or runs: removed
    from the team, demoted below the role the decision needed, deactivated, deleted.
    Nothing goes on then (fail closed: a person the database no longer knows is refused).
    A run a policy let through on an agent's token, with no person reading it, goes on that
    token as well: revoked or deleted, it lets nothing more run.
    """
    if run.api_token_id is not None and not token_still_active(run.api_token_id):
        return TOKEN_ENDED
    person = None if run.created_by_id is None else _people().get(run.created_by_id)
    if person is None:
        return DELETED_DECIDER
    if not person.is_active:
        return f"the account that let it through ({person.username}) was deactivated"
    needed = DECIDER_ROLE.get(run.source, Role.MEMBER)
    role = next((m.role for m in USER_MEMBERSHIPS.all(person.pk) if m.team_id == team_id), None)
    if role is None:
        return f"{person.username}, who let it through, is no longer in the sandbox's team"
    if ROLE_RANK[Role(role)] < ROLE_RANK[needed]:
        return (
            f"{person.username}, who let it through, is no longer a "
            f"{needed.label.lower()} of the sandbox's team"
        )
    return ""


def runs_live_of_person(*, user_id: int) -> list[Any]:
    """Return the ids of the runs a person let through that have not ended."""
    return list(_live_of_person(user_id).values_list("pk", flat=True))


def _live_of_person(user_id: int) -> QuerySet[Run]:
    return Run.objects.filter(created_by_id=user_id, cancel_reason="").exclude(
        status__in=RunStatus.finished()
    )


def runs_of_person_recheck(*, user_id: int) -> int:
    """Stop a person's live runs that their authority no longer covers; return how many.

    Called when a membership changes or goes, and when an account is deactivated or deleted
    (`runs.receivers`): a queued run ends at once, a running one's sandbox is killed.
    """
    stopped = 0
    for run in (
        _live_of_person(user_id)
        .select_related("sandbox")
        .only("pk", "created_by", "source", "api_token", "sandbox__team")
    ):
        cause = run_decider_refusal(run=run, team_id=run.sandbox.team_id)
        if cause and run_stop(run_id=run.pk, reason=f"cancelled: {cause}"):
            stopped += 1
    return stopped


def runs_of_token_stop(*, token_id: int) -> int:
    """Stop the live runs an agent's token got through without a reviewer; return how many.

    Called once its revoke or delete is committed (`runs.receivers`): someone holding a
    leaked token may have queued many, and none of them may start once it is revoked.
    """
    live = Run.objects.filter(api_token_id=token_id, cancel_reason="").exclude(
        status__in=RunStatus.finished()
    )
    reason = f"cancelled: {TOKEN_ENDED}"
    return sum(run_stop(run_id=pk, reason=reason) for pk in list(live.values_list("pk", flat=True)))


def runs_let_through_stop(*, sandbox_id: int, every_tool_only: bool, reason: str) -> int:
    """Stop the live runs of a sandbox that a policy let through with nobody reading them.

    Called once a stricter review policy is committed (`reviews.services.policy`): an admin
    who tightens it (an agent misbehaving) means nothing unread to start after, and an agent
    can keep its runs queued as long as it likes. `every_tool_only` stops only the runs let
    through with every tool (the `never` policy's); the others call only the always-allowed
    tools, at the code an admin accepted, which a policy that still reads scripts allows.
    Returns how many were stopped.
    """
    live = Run.objects.filter(
        sandbox_id=sandbox_id, api_token__isnull=False, allowed_by_reviewer=False, cancel_reason=""
    ).exclude(status__in=RunStatus.finished())
    if every_tool_only:
        live = live.filter(allowed_tools__isnull=True)
    return sum(run_stop(run_id=pk, reason=reason) for pk in list(live.values_list("pk", flat=True)))


def run_claimed_by(*, run_id: Any, worker: str, at: datetime.datetime) -> Run | None:
    """Return a run if this worker's claim made `at` holds it, else None.

    For a claim whose answer was lost (the database stopped answering as it committed):
    whether the run is this worker's is then read, never guessed.
    """
    return Run.objects.filter(pk=run_id, worker=worker, claimed_at=at, status__in=ACTIVE).first()


def run_claimable(*, run_id: Any) -> Run | None:
    """Return a run still queued that nobody asked to stop (None: claimed, ended or cancelled).

    Read without its sandbox: the worker reads that by its id (`catalog.models.SANDBOX`).
    """
    return CLAIMABLE.get(run_id, RunStatus.QUEUED, "")


# How long a run may wait queued, or its worker stay silent, before its page says why.
QUIET_HINT_SECONDS = 10.0


def run_wait_notice(*, run: Run, now: datetime.datetime | None = None) -> str:
    """Say what a live run waits for ("" when nothing is worth saying); "" once it ended.

    The one notice of a run's pane, asked again every few seconds while the run is live
    (`runs.views.run_wait_view`), so that it never outlives what it says: a stop asked and
    waiting for its worker; a queued run's place, or that no worker of this deployment runs
    (none started, or one started with another deployment name or Redis prefix, which beats
    in the database but never hears the run); a worker silent for more than two heartbeats.
    """
    if run.is_finished:
        return ""
    now = now or timezone.now()
    if run.cancel_reason:
        return (
            f"A stop was asked ({run.cancel_reason}): the run ends as soon as its worker stops "
            "the sandbox, or, if its worker stopped answering, once the reaper finds it gone."
        )
    if run.status == RunStatus.QUEUED:
        return _no_worker_notice(run, now) or _queue_place(run)
    if run.status in (RunStatus.PREPARING, RunStatus.RUNNING) and run.heartbeat_at is not None:
        silent = (now - run.heartbeat_at).total_seconds()
        if silent > 2 * settings.JAZZMINE_HEARTBEAT_SECONDS:
            limit = int(settings.JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS)
            every = f"every {settings.JAZZMINE_REAP_SECONDS:g} s"
            heard = f"Its worker {run.worker} was last heard from {int(silent)} s ago"
            if silent < limit:
                return (
                    f"{heard}: if it stays silent, the reaper ends the run as lost at its "
                    f"first pass ({every}) after that reaches {limit} s."
                )
            return f"{heard}: the reaper ends the run as lost at its next pass ({every})."
    return ""


def _no_worker_notice(run: Run, now: datetime.datetime) -> str:
    """Say that a run long queued has no worker of this deployment to take it ("" if it has)."""
    since = run.enqueued_at or run.created_at
    if (now - since).total_seconds() < QUIET_HINT_SECONDS:
        return ""
    alive = workers_alive(queue=settings.JAZZMINE_REDIS_PREFIX, now=now)
    if alive.here:
        return ""
    waited = int((now - since).total_seconds())
    notice = f"No worker of this deployment has been running for the {waited} s it waited"
    if alive.elsewhere:
        named = ", ".join(f"{n} (prefix {q!r})" for n, q in sorted(alive.elsewhere.items()))
        return (
            f"{notice}. Worker(s) {named} share this database but listen under another "
            f"Redis prefix than this one ({settings.JAZZMINE_REDIS_PREFIX!r}): give every "
            "process the same JAZZMINE_DEPLOYMENT and JAZZMINE_REDIS_PREFIX."
        )
    return f"{notice}: it starts once one is (is a worker of this deployment started?)."


def _queue_place(run: Run) -> str:
    """Say how many queued runs go before this one."""
    ahead = (run_queue_position(run=run) or 1) - 1
    if ahead == 0:
        return "Queued: no run is ahead of it; it starts when a worker is free."
    if ahead == 1:
        return "Queued: 1 run is ahead of it; it starts once that one has a worker."
    return f"Queued: {ahead} runs are ahead of it, each waiting for a free worker."


def run_queue_position(*, run: Run) -> int | None:
    """Return how many queued runs go before this one, plus one (None once it has started)."""
    if run.status != RunStatus.QUEUED:
        return None
    return Run.objects.filter(status=RunStatus.QUEUED, created_at__lt=run.created_at).count() + 1


def run_may_cancel(*, run: Run, user: Any) -> bool:
    """Tell whether a person may stop a run: its author, or an admin of its sandbox's team.

    An admin must be able to stop what a member started (a member who left, a run gone
    wrong); anyone else only sees it.
    """
    if getattr(user, "pk", None) is None:
        return False
    if run.created_by_id == user.pk:
        return True
    return run.sandbox.team_id in team_ids_with_role(user=user, role=Role.ADMIN)


def run_cancel(*, run: Run, user: Any) -> bool:
    """Stop a run its author or a team admin asks to (its sandbox within a second).

    Tell whether it was live.
    """
    if run.is_finished or not run_may_cancel(run=run, user=user):
        return False
    who = getattr(user, "username", "") or "its author"
    return run_stop(run_id=run.pk, reason=f"cancelled by {who}")


def run_stop(*, run_id: Any, reason: str) -> bool:
    """End a run for a reason: at once when queued, else its worker kills the sandbox.

    Tell whether the run was still live.
    """
    state = run_cancel_request(run_id=run_id, reason=reason)
    if state in ("running", "asked"):
        # Every worker hears it; the one executing the run kills its sandbox (again is harmless).
        workers_broadcast("run_cancel", run_id=str(run_id), reason=reason)
    return state in ("queued", "running")


def sandbox_prewarm(*, sandbox_id: int) -> None:
    """Ask every worker to fill its pool of a sandbox, so that the next run starts warm."""
    workers_broadcast("sandbox_prewarm", sandbox_id=sandbox_id)


def run_cancel_request(*, run_id: Any, reason: str) -> str:
    """Record that a person wants a run stopped; return "queued", "running", "asked" or "finished".

    A queued run ends here and now. A running one ends when its worker kills the sandbox (it
    is told at once; the reason on the row makes a later claim refuse the run as well). Only
    the first request records its reason and ends a queued run; one that comes while a stop
    is already asked for ("asked": a retry, a second tab) changes nothing, so the run ends
    `cancelled` once and is audited once.
    """
    with transaction.atomic():
        live = Run.objects.filter(pk=run_id).exclude(status__in=RunStatus.finished())
        if not live.filter(cancel_reason="").update(cancel_reason=reason):
            return "asked" if live.exists() else "finished"
        queued = Run.objects.filter(pk=run_id, status=RunStatus.QUEUED).exists()
    if queued:
        services.run_fail(run_id=run_id, outcome=Outcome.CANCELLED, message=reason)
        return "queued"
    return "running"


def runs_heartbeat(*, worker: str, ids: list[str]) -> list[str]:
    """Say a worker's runs are alive; return those that were ended for it meanwhile.

    A run the reaper has failed (its worker was too slow to say it was alive), or whose row is
    gone, must stop: the worker cancels what this returns. So must a live run someone asked to
    cancel: the broadcast that tells the worker at once is fire and forget, and one lost on
    its way must not leave the run spinning until its timeout. A run that just ended by
    itself is not among them: its worker is only finishing up (cancelling that would cut its
    clean-up).
    """
    Run.objects.filter(pk__in=ids, worker=worker, status__in=ACTIVE).update(
        heartbeat_at=timezone.now()
    )
    # A reaped run is no longer active, so its outcome alone says it was ended for the worker.
    rows = {
        pk: (outcome, status in ACTIVE and reason != "")
        for pk, outcome, status, reason in Run.objects.filter(pk__in=ids).values_list(
            "pk", "outcome", "status", "cancel_reason"
        )
    }
    stop = []
    for run_id in ids:
        outcome, cancel_asked = rows.get(_uuid(run_id), (Outcome.WORKER_LOST, False))
        if outcome == Outcome.WORKER_LOST or cancel_asked:
            stop.append(run_id)
    return stop


def run_cancel_reason(*, run_id: Any) -> str:
    """Return why someone asked a run to stop ("" when nobody did)."""
    return Run.objects.filter(pk=run_id).values_list("cancel_reason", flat=True).first() or ""


def runs_reap(
    *, now: datetime.datetime | None = None, judge_silence: bool = True
) -> dict[str, int]:
    """Fail runs whose worker stopped answering; queue again runs no worker ever claimed.

    Returns how many of each it handled. Without `judge_silence` (just after the database
    stopped answering: `workers.process.silence_counts`) no run is taken for lost.
    """
    now = now or timezone.now()

    def silent(worker: str, beat: datetime.datetime) -> str:
        return (
            f"the worker executing this run ({worker or 'unknown'}) stopped answering "
            f"(no heartbeat for {round((now - beat).total_seconds())} s); the run was ended, "
            "and its sandbox is removed by another worker on its Docker host, which looks "
            f"every {settings.JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS:g} s, or when that worker "
            "starts again"
        )

    lost = Run.objects.filter(status__in=ACTIVE, heartbeat_at__lt=heartbeat_cutoff(now))
    failed = _runs_end_lost(lost, now=now, why=silent) if judge_silence else 0
    requeued = 0
    for run_id in Run.objects.filter(
        status=RunStatus.QUEUED, cancel_reason="", enqueued_at__lt=never_started_cutoff(now)
    ).values_list("pk", flat=True):
        # The task may be lost (a broker restart) or waiting behind busy workers; queueing it
        # again is safe either way, since only one claim of a run can succeed.
        services.run_enqueue(run_id=run_id)
        requeued += 1
    if failed or requeued:
        logger.warning("reaper: ended %d run(s) of lost workers, queued %d again", failed, requeued)
    return {"failed": failed, "requeued": requeued}


def runs_of_earlier_life_end(*, worker: str, before: datetime.datetime) -> int:
    """End the runs a worker's previous process held when it died; return how many."""

    def restarted(worker: str, beat: datetime.datetime) -> str:
        return (
            f"the worker executing this run ({worker}) was restarted while the run went on "
            "(its previous process was killed); the run was ended, and its sandbox removed"
        )

    held = Run.objects.filter(status__in=ACTIVE, worker=worker, heartbeat_at__lt=before)
    return _runs_end_lost(held, now=timezone.now(), why=restarted)


def _runs_end_lost(
    rows: QuerySet[Run], *, now: datetime.datetime, why: Callable[[str, datetime.datetime], str]
) -> int:
    """Fail the active runs of a gone worker, each saying `why(worker, last heartbeat)`.

    A run someone asked to stop (the worker died before it could) ends `cancelled`, as asked,
    its reason first: the person who pressed Cancel reads that it stopped, and why so late.
    """
    failed = 0
    listed = rows.values_list("pk", "worker", "heartbeat_at", "cancel_reason")
    for run_id, worker, beat, cancel_reason in listed:
        # Claim the ending: only one reaper writes it, and a heartbeat that came in between
        # (the worker was slow, not dead) keeps the run.
        won = Run.objects.filter(pk=run_id, status__in=ACTIVE, heartbeat_at=beat).update(
            heartbeat_at=now
        )
        if not won:
            continue
        try:
            message = why(worker, beat)
            outcome = Outcome.WORKER_LOST
            if cancel_reason:
                outcome, message = Outcome.CANCELLED, f"{cancel_reason} ({message})"
            services.run_fail(run_id=run_id, outcome=outcome, message=message)
            failed += 1
        except Exception:
            logger.exception("could not end run %s of a lost worker", run_id)
    return failed


def _uuid(value: Any) -> Any:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
