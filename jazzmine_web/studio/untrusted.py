"""Checks that text from outside (an API body, a form, a socket's message) meets before use.

One rule each, shared by every way in, so that the API, the pages and the sockets refuse the
same input with the same reason.
"""

from __future__ import annotations

from typing import Any

# Longer than any id or size this app counts (a 64-bit integer has 19 digits); a longer run of
# digits is no number it could mean, and int() refuses over 4300 digits anyway.
MAX_NUMBER_DIGITS = 18
NUL = "\x00"


def ascii_number(raw: str) -> int | None:
    """Return the number a short run of ASCII digits spells, or None for anything else.

    str.isdigit alone accepts "²", "①" and other scripts' digits, which int() then refuses or
    reads as some other number; a sign, spaces or underscores are no part of an id either.
    """
    if raw.isascii() and raw.isdigit() and len(raw) <= MAX_NUMBER_DIGITS:
        return int(raw)
    return None


def nul_field(value: Any, name: str = "") -> str | None:
    """Return where a NUL character is in a JSON-like value ('task', 'tools[2]'), or None.

    PostgreSQL cannot store NUL in text (psycopg refuses it even as a query's parameter), and
    no script, name or sentence needs one: text that has one is refused, never cut.
    """
    if isinstance(value, str):
        return name or "the text" if NUL in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{name}.{key}" if name else str(key)
            if NUL in str(key):
                return path.replace(NUL, "\\u0000")
            found = nul_field(item, path)
            if found is not None:
                return found
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = nul_field(item, f"{name}[{index}]")
            if found is not None:
                return found
    return None


def nul_message(field: str) -> str:
    """Return the sentence a refused NUL character gets."""
    return (
        f"'{field}' contains a NUL character (\\u0000), which text here cannot hold; "
        "remove it and send again."
    )
