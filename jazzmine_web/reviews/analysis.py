"""Static reading of a script body: where its violations are, and diffs."""

from __future__ import annotations

import re
from collections.abc import Iterable

from jazzmine.core.tools import plain_newlines

_LINE = re.compile(r"^Line (\d+):")


def violation_body_lines(violations: Iterable[str]) -> dict[int, list[str]]:
    """Map the validator's `Line N:` messages (numbered by body line) to their lines."""
    lines: dict[int, list[str]] = {}
    for message in violations:
        match = _LINE.match(message)
        number = int(match.group(1)) if match else 1
        lines.setdefault(max(1, number), []).append(message)
    return lines


def same_body(a: str, b: str) -> bool:
    """Tell whether two bodies are one script (newlines at either end change nothing)."""
    return plain_newlines(a).strip("\n") == plain_newlines(b).strip("\n")
