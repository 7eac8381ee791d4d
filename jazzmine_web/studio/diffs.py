"""Unified diffs of two texts, as every page that compares scripts or prompts shows them."""

from __future__ import annotations

import difflib


def unified_diff(old: str, new: str, *, old_name: str, new_name: str) -> str:
    """Return a unified diff of two texts (empty when they are equal)."""
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=old_name,
            tofile=new_name,
        )
    )
