"""Import script tools from `<tool_name>/{tool.json, script.py}` folders (or a zip); never run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from jazzmine.scripttools import ScriptToolError, load_tools_dir, load_zip
from jazzmine_web.catalog.management.lookups import author_named, sandbox_named
from jazzmine_web.scripttools.services import script_tools_import


class Command(BaseCommand):
    help = "Import script tools (folders of tool.json + script.py, or a zip) into a sandbox."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="a folder of tool folders, one tool folder, or a .zip")
        parser.add_argument("--team", required=True, help="team slug")
        parser.add_argument("--sandbox", required=True, help="sandbox name")
        parser.add_argument("--author", help="username recorded as the versions' author")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["path"])
        if not path.exists():
            raise CommandError(f"{path} does not exist")
        sandbox = sandbox_named(team=options["team"], name=options["sandbox"])
        author = author_named(options.get("author"))
        try:
            tools = load_zip(path) if path.is_file() else load_tools_dir(path)
            report = script_tools_import(
                sandbox=sandbox, tools=tools, author=author, origin=path.name
            )
        except ScriptToolError as exc:
            raise CommandError(f"Nothing was imported: {exc}") from exc
        except ValidationError as exc:
            raise CommandError("Nothing was imported:\n" + "\n".join(exc.messages)) from exc
        self.stdout.write(report.summary())
