"""A tool parameter's `required` is true or false, as ToolParameter now insists.

A form's or a tool.json's `"required": "false"` was stored as text: the prompt said
required="false" while bash's schema, reading the text as true, made the parameter required.
ToolParameter refuses anything but a boolean now, and a row still holding text would stop
every registry of its sandbox: "true" and "false" (any case) are read as they say, and any
other value as Python read it before.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


def required_as_boolean(value: Any) -> bool:
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return bool(value)


def booleans(apps: Any, schema_editor: Any) -> None:
    Tool = apps.get_model("catalog", "Tool")
    rows = Tool.objects.using(schema_editor.connection.alias)
    for tool in rows.only("pk", "parameters").iterator():
        parameters = tool.parameters
        if not isinstance(parameters, list):
            continue
        fixed = [
            {**p, "required": required_as_boolean(p["required"])}
            if isinstance(p, dict) and "required" in p and not isinstance(p["required"], bool)
            else p
            for p in parameters
        ]
        if fixed != parameters:
            rows.filter(pk=tool.pk).update(parameters=fixed)


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0015_script_tool_code_leaves_out_its_description"),
    ]

    operations = [migrations.RunPython(booleans, migrations.RunPython.noop)]
