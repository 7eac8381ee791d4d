"""Imports of tools into the catalog, all or nothing, and the report of what one did."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from ...studio import checker
from ...studio.checker import CheckerUnavailable, checked
from ...teams.models import Team
from ..importer import ImportProblem, ImportRefused, SourceFile, parse_files
from ..importer.parse import ParsedImport
from ..importer.sources import max_file_bytes
from ..models import Sandbox, Tool
from .rules import upload_name_clash
from .sandboxes import sandbox_create, sandbox_update
from .tools import ToolChange, tool_create, tool_update


@dataclass
class ImportReport:
    """What an import did (of `@tool` functions or of script tools), tool by tool."""

    created: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # code, needs or prompt: a new version
    updated: list[str] = field(default_factory=list)  # stored, but no version (nothing it reads)
    unchanged: list[str] = field(default_factory=list)
    sandboxes_created: list[str] = field(default_factory=list)
    sandboxes_updated: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # What a new version means: script tools' new code waits for a trial run.
    changed_note: str = "new version"

    @property
    def changed_anything(self) -> bool:
        """Tell whether the import wrote anything."""
        return bool(
            self.created
            or self.changed
            or self.updated
            or self.sandboxes_created
            or self.sandboxes_updated
        )

    def tool_count(self, *, name: str, change: ToolChange) -> None:
        """Count a tool the import saved again, under what its change did."""
        if change.new_version is not None:
            self.changed.append(name)
        elif change.changed:
            self.updated.append(name)
        else:
            self.unchanged.append(name)

    def summary(self) -> str:
        """Return one line saying what happened."""
        parts = []
        for label, names in (
            ("created", self.created),
            (f"changed ({self.changed_note})", self.changed),
            ("updated", self.updated),
            ("unchanged", self.unchanged),
        ):
            if names:
                parts.append(f"{label}: {', '.join(names)}")
        for label, names in (
            ("sandboxes created", self.sandboxes_created),
            ("sandboxes updated", self.sandboxes_updated),
        ):
            if names:
                parts.append(f"{label}: {', '.join(names)}")
        return "; ".join(parts) or "nothing to import"


checker.preload(parse_files.__module__)


def _parsed(files: list[SourceFile], *, target_sandbox: str | None) -> ParsedImport:
    # Up to the upload's limit (megabytes) of Python to parse: in the checker process, as a
    # big script is, and not on a web process's thread, where the parse holds the GIL that
    # every socket of the process waits on (2.3 s for 2 MB).
    chars = sum(len(item.data or b"") for item in files)
    try:
        return checked(
            chars,
            parse_files,
            files,
            target_sandbox=target_sandbox,
            max_file_bytes=max_file_bytes(),
        )
    except CheckerUnavailable as exc:
        raise ImportRefused(
            [ImportProblem("(the files)", None, f"could not be read: {exc.why}; try again")]
        ) from None


def tools_import(
    *,
    team: Team,
    files: Sequence[Any],
    author: AbstractBaseUser | None,
    sandbox_name: str | None = None,
    actor: AbstractBaseUser | None = None,
) -> ImportReport:
    """Import `@tool` functions from source files by parsing them; all or nothing.

    `files` are `importer.SourceFile`s. With `sandbox_name`, every tool goes into that sandbox;
    without it, each goes where its decorator's `sandbox=` says ("default" when unsaid).
    Raises `importer.ImportRefused` listing every problem; then nothing is written.
    """
    parsed = _parsed(list(files), target_sandbox=sandbox_name)
    report = ImportReport(notes=list(parsed.notes))
    problems: list[ImportProblem] = []
    with transaction.atomic():
        sandboxes: dict[str, Sandbox] = {}
        for name in parsed.sandbox_names():
            config = parsed.configs.get(name)
            existing = Sandbox.objects.filter(team=team, name=name).first()
            try:
                if existing is None:
                    values = config.values if config else {}
                    sandboxes[name] = sandbox_create(team=team, name=name, actor=actor, **values)
                    report.sandboxes_created.append(name)
                else:
                    if config and sandbox_update(sandbox=existing, actor=actor, **config.values):
                        report.sandboxes_updated.append(name)
                    sandboxes[name] = existing
            except (ValidationError, PermissionDenied) as exc:
                where = config.where if config else parsed.first_tool_where(name)
                problems.append(ImportProblem(where[0], where[1], _messages(exc)))
        seen: dict[str, list[str]] = {}  # the upload's tool names, by sandbox
        for item in parsed.tools:
            sandbox = sandboxes.get(item.sandbox)
            if sandbox is None:
                continue
            clash = upload_name_clash(seen.setdefault(item.sandbox, []), item.name)
            seen[item.sandbox].append(item.name)
            if clash is not None:
                problems.append(ImportProblem(item.filename, item.line, clash))
                continue
            fields = {
                "description": item.description,
                "parameters": item.parameters,
                "dependencies": item.dependencies,
                "secrets": item.secrets,
                "source": item.source,
            }
            try:
                existing = Tool.objects.filter(sandbox=sandbox, name=item.name).first()
                if existing is None:
                    tool_create(
                        sandbox=sandbox,
                        name=item.name,
                        author=author,
                        note=f"Imported from {item.filename}",
                        actor=actor,
                        **fields,
                    )
                    report.created.append(item.name)
                    continue
                change = tool_update(
                    tool=existing,
                    author=author,
                    note=f"Imported from {item.filename}",
                    actor=actor,
                    **fields,
                )
            except (ValidationError, PermissionDenied) as exc:
                problems.append(ImportProblem(item.filename, item.line, _messages(exc)))
                continue
            report.tool_count(name=item.name, change=change)
        if problems:
            transaction.set_rollback(True)
    if problems:
        raise ImportRefused(problems)
    return report


def _messages(exc: ValidationError | PermissionDenied) -> str:
    """Return an error's messages as one line."""
    if isinstance(exc, ValidationError):
        return "; ".join(exc.messages)
    return str(exc)
