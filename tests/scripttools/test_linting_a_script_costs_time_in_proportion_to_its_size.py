"""Linting a script costs time in proportion to its size, never to its square.

The tool page of a script tool lints its script in the web process on every view. The
JavaScript reader is regular expressions: a pattern that scans to the end of the text from
each of many starts before failing (`a.b ?? [` without a `]`, `if (` without a `)`), or a
line number counted from the start of the text for each of many matches, made one view of a
member's 1 MB `script.js` hold a web worker for minutes.
"""

from __future__ import annotations

import time

import pytest

from jazzmine.scripttools import ScriptTool, lint_tool
from jazzmine.scripttools.layout import MAX_SCRIPT_BYTES


def filled(unit: str) -> str:
    return unit * (MAX_SCRIPT_BYTES // len(unit))


SCRIPTS = {
    "many outputs": filled("console.log(1)\n"),
    "many requires": filled("require('a')\n"),
    "fallbacks to unclosed arrays": filled("a.b ?? ["),
    "fallbacks to unclosed objects": filled("a.b ?? {"),
    "fallbacks to unclosed strings": filled('a.b ?? "'),
    "fallbacks to unclosed single-quoted strings": filled("a.b || '"),
    "unclosed if tests": filled("if ("),
    "unclosed destructurings": filled("const {"),
    "unclosed comments": filled("/* "),
    "blank lines": filled("\n"),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", SCRIPTS)
def test_a_one_megabyte_script_lints_in_a_few_seconds(case: str) -> None:
    tool = ScriptTool(
        name="fetch_x",
        description="Fetch x for tests. Use when a test needs x.",
        source=SCRIPTS[case],
        runtime="node",
    )
    started = time.monotonic()
    items = lint_tool(tool)
    assert items
    assert time.monotonic() - started < 3.0
