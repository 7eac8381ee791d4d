"""A pending submission's reading names its script tools' code under their new digests.

A script tool's description left its code (catalog 0015). The reading of a submission
waiting for a person names each tool's digest, which the Approve form binds: a digest of a
script tool's code as it is today is carried over, so the upgrade alone refuses no open
review page as "recoded"; any other digest stays, and matches nothing.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


def carry_readings_over(apps: Any, schema_editor: Any) -> None:
    from jazzmine_web.catalog.digest_upgrades import (
        readings_carried_over,
        script_digest_carried_over,
    )

    Submission = apps.get_model("reviews", "Submission")
    Tool = apps.get_model("catalog", "Tool")
    alias = schema_editor.connection.alias
    for submission in Submission.objects.using(alias).filter(status="pending"):
        listed = submission.tools_called
        if not isinstance(listed, list) or not listed:
            continue
        names = [t["name"] for t in listed if isinstance(t, dict) and "name" in t]
        tools = Tool.objects.using(alias).filter(
            sandbox_id=submission.sandbox_id, name__in=names, kind="script"
        )
        today = {t.name: t for t in tools}
        carried = readings_carried_over(listed, today, script_digest_carried_over)
        if carried != listed:
            Submission.objects.using(alias).filter(pk=submission.pk).update(tools_called=carried)


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0011_readings_bind_documented_parameters"),
        ("catalog", "0015_script_tool_code_leaves_out_its_description"),
    ]

    operations = [migrations.RunPython(carry_readings_over, migrations.RunPython.noop)]
