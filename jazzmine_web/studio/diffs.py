"""Unified diffs of two texts, as every page that compares scripts or prompts shows them."""

from __future__ import annotations

import difflib


def unified_diff(old: str, new: str, *, old_name: str, new_name: str) -> str:
    """Return a unified diff of two texts (empty when they are equal)."""
    return "".join(
        difflib.unified_diff(
            _lines(old),
            _lines(new),
            fromfile=old_name,
            tofile=new_name,
        )
    )


def _lines(text: str) -> list[str]:
    # difflib glues a last line without its newline to the next line of the diff: end each.
    return [line if line.endswith("\n") else line + "\n" for line in text.splitlines(True)]
