"""Import `@tool` functions from a folder of `.py` files (parsed, never executed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from jazzmine_web.catalog.importer import ImportRefused, source_file_from_path
from jazzmine_web.catalog.management.lookups import author_named
from jazzmine_web.catalog.services.imports import tools_import
from jazzmine_web.teams.models import Team


class Command(BaseCommand):
    help = "Import the @tool functions of every .py file under a folder into a team's catalog."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="a folder (searched recursively) or one .py file")
        parser.add_argument("--team", required=True, help="team slug")
        parser.add_argument(
            "--sandbox", help="put every tool into this sandbox (default: each @tool's sandbox=)"
        )
        parser.add_argument("--author", help="username recorded as the versions' author")

    def handle(self, *args: Any, **options: Any) -> None:
        root = Path(options["path"])
        if not root.exists():
            raise CommandError(f"{root} does not exist")
        paths = [root] if root.is_file() else sorted(root.rglob("*.py"))
        paths = [p for p in paths if not any(part.startswith(".") for part in p.parts)]
        # A link's target may be any file this process can read (`/etc/passwd`, the secrets
        # key): its text came back in the syntax error. The script-tool loaders refuse links
        # too; a tool's source is a file of the folder given.
        inside = root.resolve() if root.is_dir() else root.resolve().parent
        linked = [p for p in paths if p.is_symlink() or not p.resolve().is_relative_to(inside)]
        if linked:
            raise CommandError(
                f"Nothing was imported: {linked[0]} is a symbolic link; import the file itself"
            )
        if not paths:
            raise CommandError(f"No .py files under {root}")
        team = Team.objects.filter(slug=options["team"]).first()
        if team is None:
            raise CommandError(f"No team with slug {options['team']!r}")
        author = author_named(options.get("author"))
        try:
            report = tools_import(
                team=team,
                files=[source_file_from_path(p) for p in paths],
                author=author,
                sandbox_name=options.get("sandbox"),
            )
        except ImportRefused as exc:
            raise CommandError(f"Nothing was imported:\n{exc}") from exc
        self.stdout.write(report.summary())
        for note in report.notes:
            self.stdout.write(note)
