"""Static reading of a script body: where its violations are, and diffs."""

from __future__ import annotations

import re
from collections.abc import Iterable

_LINE = re.compile(r"^Line (\d+):")


def violation_body_lines(violations: Iterable[str]) -> dict[int, list[str]]:
    """Map the validator's `Line N:` messages (numbered by body line) to their lines."""
    lines: dict[int, list[str]] = {}
    for message in violations:
        match = _LINE.match(message)
        number = int(match.group(1)) if match else 1
        lines.setdefault(max(1, number), []).append(message)
    return lines


def normalise_body(text: str) -> str:
    """Return a body with the newlines a browser form sends turned back into plain ones."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def same_body(a: str, b: str) -> bool:
    """Tell whether two bodies are one script (newlines at either end change nothing)."""
    return normalise_body(a).strip("\n") == normalise_body(b).strip("\n")
