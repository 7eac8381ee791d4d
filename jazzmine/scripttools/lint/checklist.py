"""The checklist in report order, and the runner that judges a tool with it."""

from __future__ import annotations

from jazzmine.core.tools.lint import LintItem

from ..model import ScriptTool
from . import contract, defaults, dependencies, description, manifest, secrets
from .registry import Check, Registry
from .subject import Subject, read_subject

# The report reads tool.json first (its shape, defaults, descriptions), then the script's contract,
# secrets in either file, and last the script's imports against tool.json's dependencies.
CHECKS = Registry.join(
    manifest.CHECKS,
    defaults.CHECKS,
    description.CHECKS,
    contract.CHECKS,
    secrets.CHECKS,
    dependencies.CHECKS,
)
TITLES: dict[str, str] = CHECKS.titles()


def lint_tool(tool: ScriptTool) -> list[LintItem]:
    """Lint a loaded script tool."""
    return lint_files(
        tool.to_json_text(), tool.source, script_filename=tool.script_filename, folder=tool.name
    )


def lint_passed(items: list[LintItem]) -> bool:
    """Tell whether every item passed."""
    return all(item.passed for item in items)


def lint_files(
    tool_json: str, script: str, *, script_filename: str = "script.py", folder: str | None = None
) -> list[LintItem]:
    """Run the whole checklist over the raw text of tool.json and the script."""
    subject = read_subject(tool_json, script, script_filename=script_filename, folder=folder)
    return [run_check(check, subject) for check in CHECKS]


def run_check(check: Check, subject: Subject) -> LintItem:
    """Judge one item; an item whose input could not be read fails as not checked."""
    if check.needs_manifest and subject.data is None:
        passed, message = False, "not checked: tool.json could not be read"
    elif check.needs_script and subject.scan.error:
        passed, message = False, f"not checked: {subject.scan.error}"
    else:
        passed, message = check.judge(subject)
    return LintItem(check.id, check.title, passed, message)
