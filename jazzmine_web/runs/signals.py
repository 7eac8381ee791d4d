"""What other apps may listen to about runs."""

from __future__ import annotations

from django.dispatch import Signal

# Sent once a run has ended and its final status is stored, with `run_id`, `status` and
# `outcome`. Receivers run on the run worker's database thread: hand long work elsewhere.
run_finished = Signal()

# Sent once a run row exists (every surface goes through `run_create`), with `run` and `user`
# (who started it, or None). Reviews record it in the audit trail with the code's SHA-256.
run_created = Signal()
