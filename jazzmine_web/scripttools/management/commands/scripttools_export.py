"""Write a sandbox's script tools as `<tool_name>/{tool.json, script.py}` folders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from jazzmine.scripttools import save_tool_dir
from jazzmine_web.catalog.management.lookups import sandbox_named
from jazzmine_web.catalog.models import ToolKind
from jazzmine_web.catalog.services.registry import script_tool_from_row


class Command(BaseCommand):
    help = "Export the script tools of a sandbox into a folder, one subfolder per tool."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("destination", help="folder to write <tool_name>/ folders into")
        parser.add_argument("--team", required=True, help="team slug")
        parser.add_argument("--sandbox", required=True, help="sandbox name")

    def handle(self, *args: Any, **options: Any) -> None:
        sandbox = sandbox_named(team=options["team"], name=options["sandbox"])
        destination = Path(options["destination"])
        written = []
        for row in sandbox.tools.filter(kind=ToolKind.SCRIPT).order_by("name"):
            script_tool = script_tool_from_row(row)
            if script_tool is not None:
                written.append(str(save_tool_dir(script_tool, destination)))
        self.stdout.write(f"exported {len(written)} script tool(s) to {destination}")
