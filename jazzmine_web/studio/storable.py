"""Make text that comes out of something the app runs (a script, an LLM, a build) storable.

PostgreSQL holds no NUL character in text and refuses the escape `\\u0000` in jsonb, yet output
may hold one: a script prints it, an LLM answers with it, a build step writes it. Output is a
record of what happened, so it is never refused: each NUL is stored as U+FFFD, the replacement
character, as lone surrogates already are (`jazzmine.sandbox.harness.protocol.clean_text`) and
undecodable bytes become when output is read (`errors="replace"`). It is made so before it is
stored and before it is sent, so a page, a socket and an agent all read the same text, on
SQLite as on PostgreSQL. Input from a person or an agent is refused instead (`untrusted`).
"""

from __future__ import annotations

from typing import Any

from .untrusted import NUL, nul_field  # where input finds one; output is made storable

REPLACEMENT = "\ufffd"


def storable_text(text: str) -> str:
    """Return text with each NUL character replaced by U+FFFD."""
    return text.replace(NUL, REPLACEMENT) if NUL in text else text


def storable_json(value: Any) -> Any:
    """Return JSON data with each NUL in its strings and keys replaced by U+FFFD.

    Data without a NUL (nearly all of it) comes back as the same object, uncopied.
    """
    return _replaced(value) if nul_field(value) is not None else value


def _replaced(value: Any) -> Any:
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        # Two keys that differ only by a NUL against a U+FFFD become one: the later one's value.
        return {storable_text(str(key)): _replaced(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_replaced(item) for item in value]
    return value
