"""What an upgrade that leaves a script tool's description out of its code does to stored rows.

A script tool's description was the docstring of the function generated for it, so its
first line was part of `Tool.code_digest` and of `Tool.checksum`. It no longer is (the
prompt is no part of the code). The data migrations that carry what was decided on a tool's
code as it is today (an admin's acceptance, a trial's pass, a waiting run's pins, a pending
reading) over to the new digest read it here; a digest of other code stays, and matches
nothing it did not match before. Takes rows with the Tool's columns (a migration's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jazzmine.core.tools import ToolRegistry
from jazzmine.scripttools.adapter import register_script_tool, runner_fields

from .code_digest import code_digest_of, tool_code_digest
from .script_rows import SCRIPT_KIND, script_tool_from_row

Carry = Callable[[Any, str], str]


def _summary_before(description: str, name: str) -> str:
    """Return the docstring the releases before made of a description (its first line)."""
    summary = (description.strip().splitlines() or [name])[0]
    doc = summary.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    backslashes = len(doc[:-1]) - len(doc[:-1].rstrip("\\"))
    if doc.endswith('"') and backslashes % 2 == 0:
        doc = doc[:-1] + '\\"'
    return doc


def script_digest_carried_over(row: Any, digest: str) -> str:
    """Return what a digest stored while a script tool's description was code now reads as."""
    if row.kind != SCRIPT_KIND or not digest:
        return digest
    tool = script_tool_from_row(row)
    if tool is None:
        return digest
    try:
        fields = runner_fields(tool)
    except ValueError:
        return digest
    doc = _summary_before(tool.description, tool.name)
    dependencies = sorted(set(row.dependencies or []))
    before = code_digest_of(["script", {**fields, "doc": doc}, dependencies])
    return tool_code_digest(row) if digest == before else digest


def script_checksum(row: Any) -> str:
    """Return a script tool row's checksum as the registry computes it today ("" if none)."""
    tool = script_tool_from_row(row)
    if tool is None:
        return ""
    try:
        return register_script_tool(ToolRegistry(), tool).checksum
    except (ValueError, SyntaxError):
        return ""


def pins_carried_over(pins: Any, today: Mapping[str, Any], carry: Carry) -> Any:
    """Return a run's {tool: digest} pins with each digest of a tool's code today carried."""
    if not isinstance(pins, dict):
        return pins
    return {
        name: carry(today[name], digest) if name in today and isinstance(digest, str) else digest
        for name, digest in pins.items()
    }


def readings_carried_over(listed: Any, today: Mapping[str, Any], carry: Carry) -> Any:
    """Return a submission's reading ([{name, code_digest, ...}]) with today's code carried."""
    if not isinstance(listed, list):
        return listed
    carried = []
    for entry in listed:
        digest = entry.get("code_digest") if isinstance(entry, dict) else None
        tool = today.get(entry.get("name")) if isinstance(entry, dict) else None
        if tool is not None and isinstance(digest, str):
            entry = {**entry, "code_digest": carry(tool, digest)}
        carried.append(entry)
    return carried
