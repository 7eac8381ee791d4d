"""A submission waiting for a person keeps the code its reading named, under the new digests.

`Tool.code_digest` of a Python tool now binds the parameters its prompt documents (catalog
0013). A pending submission's reading names each tool's digest, which its approval is held
to: a digest of a tool's code as it is today is carried over, so a page drawn before the
upgrade is not refused as if the tool had been recoded; any other digest stays.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


def carry_readings_over(apps: Any, schema_editor: Any) -> None:
    from jazzmine_web.catalog.code_digest import digest_carried_over

    Submission = apps.get_model("reviews", "Submission")
    Tool = apps.get_model("catalog", "Tool")
    alias = schema_editor.connection.alias
    for submission in Submission.objects.using(alias).filter(status="pending"):
        listed = submission.tools_called
        if not isinstance(listed, list) or not listed:
            continue
        names = [t["name"] for t in listed if isinstance(t, dict) and "name" in t]
        tools = Tool.objects.using(alias).filter(sandbox_id=submission.sandbox_id, name__in=names)
        today = {t.name: t for t in tools}
        carried = []
        for entry in listed:
            digest = entry.get("code_digest") if isinstance(entry, dict) else None
            tool = today.get(entry.get("name")) if isinstance(entry, dict) else None
            if tool is not None and isinstance(digest, str):
                entry = {**entry, "code_digest": digest_carried_over(tool, digest)}
            carried.append(entry)
        if carried != listed:
            Submission.objects.using(alias).filter(pk=submission.pk).update(tools_called=carried)


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0010_review_settings_plural"),
        ("catalog", "0013_code_digest_binds_documented_parameters"),
    ]

    operations = [migrations.RunPython(carry_readings_over, migrations.RunPython.noop)]
