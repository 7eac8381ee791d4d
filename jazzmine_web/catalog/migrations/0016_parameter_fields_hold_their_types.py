"""Each field of a tool parameter holds its type, as ToolParameter now insists.

A form's, a tool.json's or an import's parameter was stored with whatever its fields held:
`"required": "false"` (the prompt said required="false" while bash's schema, reading the
text as true, made it required), a number as its `type` (the tool's page answered 500),
`"options": "pending"` (seven options, one a letter). ToolParameter refuses all of these now,
and a row still holding one would stop every registry of its sandbox: each is read as it
was meant. "true" and "false" (any case) are booleans; any other `required` is what Python
read it as before. A `type` that is no text is written as text ("any" for none), a
description or display name likewise, and options or examples that are no list become a
list of that one value.
"""

from __future__ import annotations

import json
from typing import Any

from django.db import migrations


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def parameter_fixed(p: dict[str, Any]) -> dict[str, Any]:
    fixed = dict(p)
    required = p.get("required", False)
    if not isinstance(required, bool):
        said = required.strip().lower() if isinstance(required, str) else None
        fixed["required"] = said == "true" if said in ("true", "false") else bool(required)
    kind = p.get("type")
    if not isinstance(kind, str) or not kind.strip():
        fixed["type"] = "any" if kind is None or kind == "" else _text(kind)
    for key in ("description", "display_name"):
        value = p.get(key)
        if value is not None and not isinstance(value, str):
            fixed[key] = _text(value)
    for key in ("options", "examples"):
        value = p.get(key)
        if value is not None and not isinstance(value, list):
            fixed[key] = [value]
    return fixed


def fields_of_their_types(apps: Any, schema_editor: Any) -> None:
    Tool = apps.get_model("catalog", "Tool")
    rows = Tool.objects.using(schema_editor.connection.alias)
    for tool in rows.only("pk", "parameters").iterator():
        parameters = tool.parameters
        if not isinstance(parameters, list):
            continue
        fixed = [parameter_fixed(p) if isinstance(p, dict) else p for p in parameters]
        if fixed != parameters:
            rows.filter(pk=tool.pk).update(parameters=fixed)


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0015_script_tool_code_leaves_out_its_description"),
    ]

    operations = [migrations.RunPython(fields_of_their_types, migrations.RunPython.noop)]
