"""A run let through without a person is bound to the whole SHA-256 of each tool's accepted code.

`allowed_tools` held {name: the tool's checksum}, 16 hex chars, which collide after some 2^32
tries: a member could swap an always-allowed tool's code for other code of its checksum while
the run waited, and once an admin accepted that (for scripts to come), the run called code
its decision never named. It now holds {name: `Tool.code_digest`}, which the worker compares.

As catalog migration 0008 did for acceptances: a run a worker may still prepare (not
finished), bound to a tool's checksum of today, is bound to the digest of that tool's code
today, which is all the checksum vouched for; a checksum of other code is left, and matches
no digest, so the worker drops that tool as it did. Finished runs keep the checksums they
were let through with: what decided them, never read again.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations, models


def digest_waiting_runs_tools(apps: Any, schema_editor: Any) -> None:
    from jazzmine_web.catalog.code_digest import tool_code_digest

    Run = apps.get_model("runs", "Run")
    Tool = apps.get_model("catalog", "Tool")
    alias = schema_editor.connection.alias
    let_through = Run.objects.using(alias).filter(allowed_by_reviewer=False)
    waiting = let_through.exclude(status__in=["succeeded", "failed"])
    for run in waiting.filter(allowed_tools__isnull=False):
        pins = run.allowed_tools
        if not isinstance(pins, dict) or not pins:
            continue  # names only, or nothing: not a checksum in sight
        tools = Tool.objects.using(alias).filter(sandbox_id=run.sandbox_id, name__in=list(pins))
        today = {t.name: t for t in tools}
        for name, checksum in pins.items():
            tool = today.get(name)
            if tool is not None and checksum == tool.checksum:
                pins[name] = tool_code_digest(tool) or checksum
        run.allowed_tools = pins
        run.save(update_fields=["allowed_tools"])


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0006_run_allowed_by_reviewer"),
        # `tool_code_digest` reads the Tool's columns as they are from there on.
        ("catalog", "0009_wheels_accepted_with_dependencies"),
    ]

    operations = [
        migrations.AlterField(
            model_name="run",
            name="allowed_tools",
            field=models.JSONField(
                blank=True,
                help_text="The tools this run may call, as decided when it was let through: {name: the SHA-256 of the code an admin had accepted (its code_digest)}, or the names a reviewer approved (see allowed_by_reviewer); null means all (a member ran it from the playground, or the sandbox never reviews).",
                null=True,
            ),
        ),
        migrations.RunPython(digest_waiting_runs_tools, migrations.RunPython.noop),
    ]
