"""What runs do when a person's or an agent token's authority changes: the live runs it no
longer covers stop.

Model signals, not the teams services: a membership is also changed or removed in the admin,
and an account deactivated or deleted there. A bulk update sends none; the worker's claim asks
again before a run starts (`runs.preparation`), so a queued run is covered either way.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.signals import post_delete, post_save, pre_delete

from ..teams.models import ApiToken, Membership
from ..teams.signals import api_token_revoked
from .lifecycle import (
    DELETED_DECIDER,
    run_stop,
    runs_live_of_person,
    runs_of_person_recheck,
    runs_of_token_stop,
)


def _recheck_after_commit(user_id: int | None) -> None:
    if user_id is not None:
        # After the commit: the check reads what was just written, as everyone else will.
        transaction.on_commit(lambda: runs_of_person_recheck(user_id=user_id))


def _membership_changed(sender: Any, instance: Membership, **_kwargs: Any) -> None:
    _recheck_after_commit(instance.user_id)


def _account_saved(sender: Any, instance: Any, update_fields: Any = None, **_kwargs: Any) -> None:
    # Every sign-in saves `last_login` alone: only a save that may have changed whether the
    # account is active is worth the read.
    if update_fields is not None and "is_active" not in update_fields:
        return
    if not instance.is_active:
        _recheck_after_commit(instance.pk)


def _account_deleting(sender: Any, instance: Any, **_kwargs: Any) -> None:
    # Read before the delete, which sets the runs' `created_by` to NULL: afterwards nothing
    # says whose they were. Stopped once the delete is committed (not if it is rolled back).
    run_ids = runs_live_of_person(user_id=instance.pk)
    if run_ids:
        reason = f"cancelled: {DELETED_DECIDER}"
        transaction.on_commit(lambda: [run_stop(run_id=pk, reason=reason) for pk in run_ids])


def _token_ended(token_id: int) -> None:
    # After the commit, as for a person: a revoke rolled back stops nothing.
    transaction.on_commit(lambda: runs_of_token_stop(token_id=token_id))


def _token_revoked(sender: Any, token_id: int, **_kwargs: Any) -> None:
    _token_ended(token_id)


def _token_deleting(sender: Any, instance: ApiToken, **_kwargs: Any) -> None:
    _token_ended(instance.pk)


def receivers_connect() -> None:
    """Connect the receivers (from the app's `ready`, once the user model is known)."""
    user_model = get_user_model()
    post_save.connect(_membership_changed, sender=Membership, dispatch_uid="runs.membership.save")
    post_delete.connect(
        _membership_changed, sender=Membership, dispatch_uid="runs.membership.delete"
    )
    post_save.connect(_account_saved, sender=user_model, dispatch_uid="runs.account.save")
    pre_delete.connect(_account_deleting, sender=user_model, dispatch_uid="runs.account.delete")
    api_token_revoked.connect(_token_revoked, dispatch_uid="runs.token.revoked")
    pre_delete.connect(_token_deleting, sender=ApiToken, dispatch_uid="runs.token.delete")
