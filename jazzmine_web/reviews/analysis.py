"""Static reading of a script body: where its violations are, and diffs."""

from __future__ import annotations

import difflib
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


def body_diff(old: str, new: str, *, old_name: str, new_name: str) -> str:
    """Return a unified diff of two bodies."""
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=old_name,
            tofile=new_name,
        )
    )
