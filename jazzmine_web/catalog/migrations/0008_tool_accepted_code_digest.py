"""An admin's acceptance of a tool's code binds to the whole SHA-256 of that code.

`always_allow_accepted_checksum` holds 16 hex chars, which collide after some 2^32 tries: a
member could make two versions of a tool with one checksum, have an admin accept the harmless
one and swap in the other, still accepted. `accepted_code_digest` holds the whole digest
(`Tool.code_digest`) and acceptance needs both. A tool accepted today (its accepted checksum
is its checksum) keeps that: its digest is taken from its current code, which is all the
checksum vouched for. The others wait for an admin, as they did.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations, models


def digest_accepted_code(apps: Any, schema_editor: Any) -> None:
    from jazzmine_web.catalog.code_digest import tool_code_digest

    Tool = apps.get_model("catalog", "Tool")
    alias = schema_editor.connection.alias
    accepted = Tool.objects.using(alias).exclude(always_allow_accepted_checksum="")
    for tool in accepted.filter(always_allow_accepted_checksum=models.F("checksum")):
        tool.accepted_code_digest = tool_code_digest(tool)
        tool.save(update_fields=["accepted_code_digest"])


class Migration(migrations.Migration):
    dependencies = [("catalog", "0007_sandbox_accepted_dependencies")]

    operations = [
        migrations.AddField(
            model_name="tool",
            name="accepted_code_digest",
            field=models.CharField(blank=True, editable=False, max_length=64),
        ),
        migrations.RunPython(digest_accepted_code, migrations.RunPython.noop),
    ]
