"""Static reading of a script body: which tools it calls, where its violations are, diffs."""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterable

_LINE = re.compile(r"^Line (\d+):")


def tools_referenced(body: str, tool_names: Iterable[str]) -> list[str]:
    """Return the sandbox tools a body calls or otherwise refers to, sorted (never runs it).

    Any load of a tool's name counts, not only a direct call: `f = get_orders; f()` calls it too.
    """
    names = set(tool_names)
    try:
        tree = ast.parse(body)
    except (SyntaxError, ValueError):
        # An unparsable body never runs; fall back to whole words so the reviewer still sees them.
        return sorted(n for n in names if re.search(rf"\b{re.escape(n)}\b", body))
    found = {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names
    }
    return sorted(found)


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
