"""Checks that keep secrets out of the LLM's hands: no secret parameters, no keys in the files."""

from __future__ import annotations

import re

from .registry import Outcome, Registry
from .subject import Subject

CHECKS = Registry()

_SECRET_WORDS = {"token", "password", "passwd", "secret", "apikey", "credential", "credentials",
                 "pwd", "passphrase"}  # fmt: skip
_KEY_QUALIFIERS = {"api", "access", "private", "secret", "auth", "client", "signing", "license"}

_KEY_PATTERNS = [
    ("AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("OpenAI/Anthropic key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}")),
    ("Stripe key", re.compile(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("private key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
    (
        "JSON Web Token",
        re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ),
    ("bearer token", re.compile(r"Bearer\s+[A-Za-z0-9_\-\.=]{20,}")),
    (
        "secret assigned to a variable",
        re.compile(
            r"(?i)\b[\w\-]*(?:api[_\-]?key|secret|token|passw(?:or)?d)[\w\-]*\b[\"']?\s*[:=]\s*"
            r"[\"']([A-Za-z0-9_\-\.+/=]{12,})[\"']"
        ),
    ),
]


def _is_secret_name(name: str) -> bool:
    """Tell whether a parameter name reads as a secret (api_key, authToken), not as sort_key."""
    words = re.split(r"[_\-]+|(?<=[a-z])(?=[A-Z])", name)
    lowered = [w.lower() for w in words if w]
    key_like = lowered == ["key"] or (
        "key" in lowered and any(q in lowered for q in _KEY_QUALIFIERS)
    )
    return key_like or any(w in _SECRET_WORDS for w in lowered)


@CHECKS.register("no_secret_parameters", "no secret is taken as a parameter")
def no_secret_parameters(subject: Subject) -> Outcome:
    """Pass when no parameter name reads as a secret."""
    flagged = [name for name in subject.props if _is_secret_name(name)]
    if flagged:
        return False, (
            f"secret-like parameter(s): {', '.join(flagged)}; read secrets from the keychain "
            "(/v1/key?key=NAME) instead of letting the LLM pass them"
        )
    return True, "ok"


@CHECKS.register(
    "no_hardcoded_keys", "no key or token is written into the files", needs_manifest=False
)
def no_hardcoded_keys(subject: Subject) -> Outcome:
    """Pass when neither file holds something shaped like a key or token."""
    found = []
    for file, text in subject.files.items():
        for label, pattern in _KEY_PATTERNS:
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                secret = match.group(0)
                masked = secret[:4] + "…" if len(secret) > 4 else "…"
                found.append(f"{file} line {line}: {label} ({masked})")
    if found:
        return False, "; ".join(sorted(set(found))) + " — fetch it from /v1/key instead"
    return True, "ok"
