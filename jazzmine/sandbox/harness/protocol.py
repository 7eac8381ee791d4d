"""The protocol's constants and the bounds its data must keep (checked by both processes)."""

from __future__ import annotations

import math
import re
from typing import Any

HARNESS_PROTOCOL = 3
SCRIPT_FILENAME = "<script>"
# Set by the runner only when it was created with allow_unrestricted=True (tests of the
# container walls); a request alone can never lift the restricted builtins.
UNRESTRICTED_ENV = "JAZZMINE_HARNESS_ALLOW_UNRESTRICTED"
# A seccomp filter (BPF, base64) the relay loads before anything else runs in the sandbox.
SECCOMP_ENV = "JAZZMINE_HARNESS_SECCOMP"
# Set ("1") by whoever runs the harness as a plain process on purpose (the tests of the
# harness itself): the machine's /tmp is not a tool's to sweep. Without it, a harness that
# finds itself outside a sandbox of its own refuses tool calls rather than skip the sweep.
SHARED_MACHINE_ENV = "JAZZMINE_HARNESS_SHARED_MACHINE"

# The host refuses events beyond these bounds (jazzmine/sandbox/events.py holds the same
# numbers); the harness checks first so a script gets an exception it can read and handle.
MAX_SAFE_INT = 2**53 - 1
MAX_EVENT_DEPTH = 64
MAX_DATA_DEPTH = MAX_EVENT_DEPTH - 4  # room for the event and intermediate wrappers
MAX_LINE_BYTES = 8 * 1024 * 1024
# One character is at most 12 bytes of ASCII JSON (a character beyond the BMP escaped as a
# surrogate pair): a log text cut into pieces this long always fits one line, with room.
MAX_LOG_CHARS = (MAX_LINE_BYTES - 4096) // 12
# An error's message and traceback are read by a person: longer ones are cut, saying so.
MAX_ERROR_CHARS = 64 * 1024
_SURROGATES = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """Replace lone surrogates (not encodable as UTF-8) with U+FFFD."""
    return _SURROGATES.sub("\ufffd", text) if _SURROGATES.search(text) else text


def clean(value: Any) -> Any:
    """Return JSON data with every string made valid Unicode (for logs and error reports)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(str(k)): clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean(v) for v in value]
    return value


def data_problem(value: Any, limit: int = MAX_DATA_DEPTH) -> str | None:
    """Say why plain JSON data breaks the protocol's bounds, or return None."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if _SURROGATES.search(item):
                return "strings must be valid Unicode (found a lone surrogate)"
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if not -MAX_SAFE_INT <= item <= MAX_SAFE_INT:
                return f"integers must lie within ±(2**53 - 1) (got one of {len(str(item))} digits)"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return "numbers must be finite"
        elif isinstance(item, (list, dict)):
            if depth > limit:
                return f"data may nest at most {limit} levels deep"
            if isinstance(item, dict):
                for key, child in item.items():
                    if not isinstance(key, str):
                        return "dict keys must be strings"
                    stack.append((key, depth + 1))
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)
        else:
            return f"{type(item).__name__} is not JSON data"
    return None
