"""The digest an admin's acceptance of a tool's code binds to: SHA-256 of all that shapes it."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from jazzmine.scripttools.adapter import runner_fields

from .script_rows import SCRIPT_KIND, script_tool_from_row


def tool_code_digest(row: Any) -> str:
    """Return the SHA-256 of what decides the code a tool row loads into runs ("" if unknown).

    A Python tool: its source and dependencies, what the core's checksum reads, and the names
    of the parameters its prompt documents, which are all a script may pass it (the harness
    refuses the others): a parameter the function takes but keeps from scripts (an endpoint,
    a flag that widens what it returns) is part of what an admin accepted. A member who
    documented it, editing nothing else, kept the acceptance and its secrets before. A script
    tool: every field its runner is made of (`runner_fields`: the script, its runtime, its
    arguments, its timeout, the secrets it is handed...) and its dependencies; not the
    template they are put in, which is ours, so an upgrade leaves acceptances as they are.
    Whole: `Tool.checksum` is 16 hex chars, which collide after some 2^32 tries, few enough
    for a member to make two versions of one checksum, have an admin accept the harmless one
    and swap in the other. Takes any row with the Tool's columns (a migration's too).
    """
    dependencies = sorted(set(row.dependencies or []))
    if row.kind == SCRIPT_KIND:
        tool = script_tool_from_row(row)
        if tool is None:
            return ""  # not a whole script tool: nothing to bind an acceptance to
        try:
            payload: list[Any] = ["script", runner_fields(tool), dependencies]
        except ValueError:
            return ""
    else:
        payload = ["python", row.source, dependencies, {"parameters": _documented(row)}]
    return code_digest_of(payload)


def digest_carried_over(row: Any, digest: str) -> str:
    """Return what a digest stored before the documented parameters were bound now reads as.

    For the migrations that carry acceptances and decisions over: a digest of a Python tool's
    code as it is today becomes `tool_code_digest` of it; any other (a script tool's, another
    code's, "") stays, and matches nothing it did not match before.
    """
    if row.kind == SCRIPT_KIND or not digest:
        return digest
    before = code_digest_of(["python", row.source, sorted(set(row.dependencies or []))])
    return tool_code_digest(row) if digest == before else digest


def _documented(row: Any) -> list[str]:
    """Return the names of the parameters a Python tool row documents, sorted."""
    names = {p.get("name") for p in row.parameters or [] if isinstance(p, dict)}
    return sorted(name for name in names if isinstance(name, str))


def code_digest_of(payload: list[Any]) -> str:
    """Return the digest of a code payload (the formula every digest here, old or new, uses)."""
    text = json.dumps(payload, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()
