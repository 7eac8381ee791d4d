"""A run waiting to start keeps the tools it was let through with, under their new digests.

`Tool.code_digest` of a Python tool now binds the parameters its prompt documents (catalog
0013). A run not yet finished holds {name: digest}: a digest of a tool's code as it is today
is carried over to its new digest, so the worker does not drop the tool as recoded; any
other digest stays, and matches nothing, as before.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


def carry_pins_over(apps: Any, schema_editor: Any) -> None:
    from jazzmine_web.catalog.code_digest import digest_carried_over

    Run = apps.get_model("runs", "Run")
    Tool = apps.get_model("catalog", "Tool")
    alias = schema_editor.connection.alias
    waiting = Run.objects.using(alias).exclude(status__in=["succeeded", "failed"])
    for run in waiting.filter(allowed_tools__isnull=False):
        pins = run.allowed_tools
        if not isinstance(pins, dict) or not pins:
            continue
        tools = Tool.objects.using(alias).filter(sandbox_id=run.sandbox_id, name__in=list(pins))
        today = {t.name: t for t in tools}
        carried = {
            name: digest_carried_over(today[name], digest)
            if name in today and isinstance(digest, str)
            else digest
            for name, digest in pins.items()
        }
        if carried != pins:
            Run.objects.using(alias).filter(pk=run.pk).update(allowed_tools=carried)


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0009_approvals_name_the_code"),
        ("catalog", "0013_code_digest_binds_documented_parameters"),
    ]

    operations = [migrations.RunPython(carry_pins_over, migrations.RunPython.noop)]
