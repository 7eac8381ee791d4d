"""Encrypt secret values at rest with Fernet, keyed from `JAZZMINE_SECRETS_KEY`."""

from __future__ import annotations

import base64
import hashlib
from functools import cache

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


@cache
def _fernet(secret: str) -> Fernet:
    # Any string makes a key: hashing it gives Fernet the 32 url-safe bytes it wants, so the
    # env var can be a passphrase and the generated file a plain random token.
    return Fernet(base64.urlsafe_b64encode(hashlib.sha256(secret.encode()).digest()))


def encrypt(value: str) -> str:
    """Return the ciphertext of a secret value."""
    return _fernet(settings.JAZZMINE_SECRETS_KEY).encrypt(value.encode()).decode()


def decrypt(ciphertext: str) -> str:
    """Return the plain value of a ciphertext made by `encrypt`."""
    try:
        return _fernet(settings.JAZZMINE_SECRETS_KEY).decrypt(ciphertext.encode()).decode()
    except InvalidToken as exc:
        raise ValueError(
            "A secret value cannot be decrypted: JAZZMINE_SECRETS_KEY changed since it was set"
        ) from exc
