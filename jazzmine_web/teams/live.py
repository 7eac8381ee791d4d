"""Tell a person's open pages that their teams changed, so they follow at once.

A page's socket joins the groups of its user's teams as it opens. A person added to a team
(or back to one) heard nothing of it until some other team's message woke their socket, and
one taken out was told only at that team's next change.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from ..studio.live import group_send
from .models import Membership

TEAMS_CHANGED = "teams.changed"


def teams_group(user_id: int) -> str:
    """Return the channel group of one person's open pages that follow their teams."""
    return f"teams-user-{user_id}"


@receiver(post_save, sender=Membership, dispatch_uid="teams.live.membership_saved")
@receiver(post_delete, sender=Membership, dispatch_uid="teams.live.membership_deleted")
def _membership_changed(*, instance: Membership, **_kwargs: Any) -> None:
    # After the commit: a socket told earlier would read the teams as they were before.
    user_id = instance.user_id
    transaction.on_commit(lambda: group_send(teams_group(user_id), {"type": TEAMS_CHANGED}))
