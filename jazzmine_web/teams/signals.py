"""What other apps may listen to about teams and tokens (teams imports no app above it)."""

from __future__ import annotations

from django.dispatch import Signal

# Sent inside the revoking transaction, with `token_id`: whatever the token set up (reviews:
# its webhook) stops with it, in the same commit.
api_token_revoked = Signal()
