"""What other apps may listen to about script tools (reviews audits it; scripttools imports
no app above it)."""

from __future__ import annotations

from django.dispatch import Signal

# Sent inside the transaction that queues a trial run of a script tool, with `trial` and
# `user` (who started it, or None). Reviews records it in the audit trail, as it records
# every run (`runs.signals.run_created`), with the SHA-256 of the code the trial runs.
trial_started = Signal()
