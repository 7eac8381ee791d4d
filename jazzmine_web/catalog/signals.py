"""What other apps may listen to about the catalog (reviews audits it; catalog imports no app)."""

from __future__ import annotations

from django.dispatch import Signal

# Sent inside the writing transaction after a catalog change, with `sandbox`, `actor` (a user,
# or None for a trusted caller such as a management command), `action` (one of ACTIONS),
# `target` ("tool NAME", "sandbox NAME", "secret NAME"), `changes` ({field: [before, after]}),
# `note` (one readable line) and `sha256` (code checksum when code is involved, else "").
catalog_changed = Signal()

ACTIONS = (
    "sandbox_created",
    "sandbox_changed",
    "sandbox_deleted",
    "tool_created",
    "tool_changed",
    "tool_deleted",
    "tool_accepted",
    "trial_wheels_accepted",
    "secret_set",
    "secret_cleared",
)
