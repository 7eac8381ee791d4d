"""The audit trail: how it names an actor, its one writer, and what it hears of other apps."""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.dispatch import receiver

from ...catalog.models import Sandbox
from ...catalog.signals import catalog_changed
from ...runs.models import Run
from ...runs.signals import run_created
from ...scripttools.models import TrialRun
from ...scripttools.signals import trial_started
from ...teams.models import ApiToken
from ..models import AuditAction, AuditEntry, Submission

logger = logging.getLogger(__name__)


# The columns an agent's label is stored in (`Submission.agent_name`, `AuditEntry.actor_label`).
AGENT_LABEL_CHARS = 200


def agent_label(token: ApiToken | None, user: AbstractBaseUser | AnonymousUser | None) -> str:
    """Return how the audit names an agent: its token and the token's owner.

    A token name (100 characters) and a username (150) together are longer than the columns
    the label goes in, which PostgreSQL refuses: the token's name is shortened, never the
    owner's, who is the one accountable.
    """
    owner = user.get_username() if user is not None and user.is_authenticated else "?"
    if token is None:
        return owner[:AGENT_LABEL_CHARS]
    room = AGENT_LABEL_CHARS - len(f"agent  ({owner})")
    name = token.name if len(token.name) <= room else token.name[: max(0, room - 1)] + "…"
    return f"agent {name} ({owner})"


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


@receiver(trial_started)
def _on_trial_started(
    *, trial: TrialRun, user: AbstractBaseUser | None, sha256: str, **_kwargs: Any
) -> None:
    """Record a script tool's trial run as a run: who started it and its code's SHA-256."""
    tool = trial.tool
    _audit(
        sandbox=tool.sandbox,
        action=AuditAction.RUN_CREATED,
        user=user,
        sha256=sha256,
        note=f"trial run of script tool {tool.name}",
        data={
            "trial_id": str(trial.pk),
            "source": "trial",
            "tool": tool.name,
            "tool_checksum": trial.checksum,
            # The code the trial may run, whole: other code may share the checksum.
            "tool_code_digest": trial.code_digest,
            "args": trial.args,
        },
    )
