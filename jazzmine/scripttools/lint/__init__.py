"""The spec's anti-hallucination checklist, run statically over tool.json and its script.

Every item is computed on its own so that one mistake fails one item; items that cannot be
checked (tool.json is not JSON, the script does not parse) say so and count as failed.
"""

from __future__ import annotations

from jazzmine.core.tools.lint import LintItem

from ..model import RUNTIMES
from .checklist import CHECKS, TITLES, lint_files, lint_passed, lint_tool
from .registry import Check, Registry

__all__ = [
    "CHECKS",
    "RUNTIMES",
    "TITLES",
    "Check",
    "LintItem",
    "Registry",
    "lint_files",
    "lint_passed",
    "lint_tool",
]
