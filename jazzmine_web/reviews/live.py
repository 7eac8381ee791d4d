"""Tell open review queues that a submission arrived or changed, from any thread."""

from __future__ import annotations

from typing import TypedDict

from ..studio.live import group_send


class QueueChangedMessage(TypedDict):
    """A channel-layer message: one submission of a team changed."""

    type: str  # "queue.changed"
    submission_id: str
    status: str


def queue_group(team_id: int) -> str:
    """Return the channel group of one team's review queue."""
    return f"reviews-team-{team_id}"


def queue_broadcast(*, team_id: int, submission_id: object, status: str) -> None:
    """Tell every open queue of a team that a submission changed."""
    message: QueueChangedMessage = {
        "type": "queue.changed",
        "submission_id": str(submission_id),
        "status": status,
    }
    group_send(queue_group(team_id), dict(message))
