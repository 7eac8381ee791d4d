"""`verify_signature` answers False to any forged header: a receiver using it never crashes.

`hmac.compare_digest` raises TypeError on a str with a non-ASCII character, so a forger's
`v1=é` made the agent's receiver answer 500 (and skip whatever followed the check).
"""

from __future__ import annotations

import hashlib
import hmac
import time

import pytest

from jazzmine.agent_client import verify_signature

SECRET = "whsec_test"
BODY = b'{"event": "submission.decided"}'


def webhook_signature(*, secret: str, timestamp: int, body: bytes) -> str:
    """Sign as the server does (`reviews.webhooks.webhook_signature`)."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={digest.hexdigest()}"


@pytest.mark.parametrize("claimed", ["é", "\u0661" * 64, "a\udcff", "\ud800", "ａ" * 64])
def test_a_signature_with_a_character_outside_ascii_is_false(claimed: str) -> None:
    header = f"t={int(time.time())},v1={claimed}"
    assert verify_signature(secret=SECRET, body=BODY, header=header) is False


def test_a_true_signature_still_verifies_and_a_replayed_old_one_does_not() -> None:
    now = int(time.time())
    header = webhook_signature(secret=SECRET, timestamp=now, body=BODY)
    assert verify_signature(secret=SECRET, body=BODY, header=header) is True
    old = webhook_signature(secret=SECRET, timestamp=now - 3600, body=BODY)
    assert verify_signature(secret=SECRET, body=BODY, header=old) is False
    assert verify_signature(secret="whsec_rotated", body=BODY, header=header) is False
