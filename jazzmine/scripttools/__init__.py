"""Script tools: `tool.json` + `script.py`/`script.js`, their lint, trial runs and adapter."""

from __future__ import annotations

from .adapter import function_source, register_script_tool
from .layout import export_zip, load_tool_dir, load_tools_dir, load_zip, save_tool_dir
from .lint import LintItem, lint_files, lint_passed, lint_tool
from .model import DEFAULT_TIMEOUT, RUNTIMES, ScriptTool, ScriptToolError
from .trial import TrialResult, TrialStatus, classify, trial_run

__all__ = [
    "DEFAULT_TIMEOUT",
    "RUNTIMES",
    "LintItem",
    "ScriptTool",
    "ScriptToolError",
    "TrialResult",
    "TrialStatus",
    "classify",
    "export_zip",
    "function_source",
    "lint_files",
    "lint_passed",
    "lint_tool",
    "load_tool_dir",
    "load_tools_dir",
    "load_zip",
    "register_script_tool",
    "save_tool_dir",
    "trial_run",
]
