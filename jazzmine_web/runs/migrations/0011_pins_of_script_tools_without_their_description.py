"""A run waiting to start keeps the script tools it was let through with, under new digests.

A script tool's description left its code (catalog 0015). A run not yet finished holds
{name: digest}: a digest of a script tool's code as it is today is carried over, so the
worker does not drop the tool as recoded; any other digest stays, and matches nothing.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


def carry_pins_over(apps: Any, schema_editor: Any) -> None:
    from jazzmine_web.catalog.digest_upgrades import pins_carried_over, script_digest_carried_over

    Run = apps.get_model("runs", "Run")
    Tool = apps.get_model("catalog", "Tool")
    alias = schema_editor.connection.alias
    waiting = Run.objects.using(alias).exclude(status__in=["succeeded", "failed"])
    for run in waiting.filter(allowed_tools__isnull=False):
        pins = run.allowed_tools
        if not isinstance(pins, dict) or not pins:
            continue
        tools = Tool.objects.using(alias).filter(
            sandbox_id=run.sandbox_id, name__in=list(pins), kind="script"
        )
        carried = pins_carried_over(pins, {t.name: t for t in tools}, script_digest_carried_over)
        if carried != pins:
            Run.objects.using(alias).filter(pk=run.pk).update(allowed_tools=carried)


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0010_pins_bind_documented_parameters"),
        ("catalog", "0015_script_tool_code_leaves_out_its_description"),
    ]

    operations = [migrations.RunPython(carry_pins_over, migrations.RunPython.noop)]
