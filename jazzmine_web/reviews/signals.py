"""What the review services tell the rest of the app, without importing who listens."""

from __future__ import annotations

from django.dispatch import Signal

# A submission changed in a way its agent hears of (`event`: "submission.decided",
# "run.finished", ...); sent inside the change's transaction. Its webhook listens
# (`reviews.webhooks`), which reads the services: they must not import it back.
# Arguments: submission_id, event.
submission_event = Signal()
