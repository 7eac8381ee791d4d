"""Acceptance of a tool's code now covers its secrets, not only always_allow.

The column keeps its name and its values. Tools whose code an admin already accepted keep
that. For the others, the code counts as accepted only where the version that brought in the
current code (its first version with today's checksum, after the last other code) was
written by a user who is an admin of the tool's team, or a superuser: exactly what an admin's
edit accepts from now on. Everything else waits for an admin's Accept (fail closed): a
member's earlier change, and code written by no one (a management command).
"""

from __future__ import annotations

from typing import Any

from django.db import migrations, models


def accept_code_admins_wrote(apps: Any, schema_editor: Any) -> None:
    Tool = apps.get_model("catalog", "Tool")
    ToolVersion = apps.get_model("catalog", "ToolVersion")
    Membership = apps.get_model("teams", "Membership")
    alias = schema_editor.connection.alias
    admins = set(
        Membership.objects.using(alias).filter(role="admin").values_list("team_id", "user_id")
    )
    tools = Tool.objects.using(alias).select_related("sandbox")
    for tool in tools.exclude(always_allow_accepted_checksum=models.F("checksum")):
        introduced = None
        versions = ToolVersion.objects.using(alias).filter(tool_id=tool.pk)
        for version in versions.select_related("author").order_by("-number"):
            if version.checksum != tool.checksum:
                break
            introduced = version
        author = introduced.author if introduced is not None else None
        if author is None:
            continue
        if author.is_superuser or (tool.sandbox.team_id, author.pk) in admins:
            Tool.objects.using(alias).filter(pk=tool.pk).update(
                always_allow_accepted_checksum=tool.checksum,
                always_allow_accepted_by=author,
                always_allow_accepted_at=introduced.created_at,
            )


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0005_worker_and_heartbeat"),
        ("teams", "0001_initial"),
    ]

    operations = [
        migrations.AlterField(
            model_name="tool",
            name="always_allow_accepted_checksum",
            field=models.CharField(
                blank=True,
                editable=False,
                help_text=(
                    "The checksum of the code a team admin accepted: secrets reach the tool, "
                    "and always_allow counts, only while its code is that code."
                ),
                max_length=16,
            ),
        ),
        migrations.RunPython(accept_code_admins_wrote, migrations.RunPython.noop),
    ]
