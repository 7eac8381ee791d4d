"""Fixtures of the script-tool web tests: a team sandbox, script tools, the engine, a worker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jazzmine.scripttools import ScriptTool, load_tool_dir
from jazzmine_web.catalog.services import sandbox_create, script_tool_save
from jazzmine_web.scripttools.models import TrialRun
from jazzmine_web.scripttools.services import trial_execute, trial_start
from tests.scripttools.samples import RSI


def rsi_tool(**changes: Any) -> ScriptTool:
    """Return the good calculate_rsi script tool, with some fields changed."""
    tool = load_tool_dir(RSI)
    for key, value in changes.items():
        setattr(tool, key, value)
    return tool


def make_tool(name: str, source: str, **fields: Any) -> ScriptTool:
    """Return a small script tool with the given script."""
    fields.setdefault(
        "description",
        f"Answer {name} questions for tests. Use when a test needs the {name} script.",
    )
    return ScriptTool(name=name, source=source, **fields)


def tool_json(path: Path) -> dict[str, Any]:
    return json.loads((path / "tool.json").read_text())


@pytest.fixture
def sandbox(team):
    return sandbox_create(team=team, name="quant")


@pytest.fixture
def rsi_row(sandbox, member):
    row, _ = script_tool_save(sandbox=sandbox, tool=rsi_tool(), author=member)
    return row


def run_trial(row, args: dict[str, Any] | None = None, user=None):
    """Run a trial of a row in this thread (the web layer starts the same in a worker)."""
    trial = trial_start(tool=row, user=user, args=args, background=False)
    return trial_execute(trial_id=trial.pk)


def trial_recorded(row, *, status: str = "valid_json", passed: bool = True) -> TrialRun:
    """Record a finished trial of the row's current code, as a worker leaves one (the trial
    tests run real ones)."""
    return TrialRun.objects.create(
        tool=row, checksum=row.checksum, code_digest=row.code_digest, state="done",
        status=status, passed=passed,
    )  # fmt: skip
