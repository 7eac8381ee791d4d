"""A tool's JSON keeps its keys in the order written, on PostgreSQL too (`OrderedJSONField`).

There the columns become text holding the JSON as written; a row stored before keeps the
order jsonb gave it, which is the order every run has read it in since. SQLite stores JSON
as text already: only the field changes. Written out, as Django's own AlterField would cast
neither way (both are JSONFields to it).
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

import jazzmine_web.studio.fields

COLUMNS = [
    ("catalog_tool", "extra"),
    ("catalog_tool", "parameters"),
    ("catalog_tool", "schema"),
    ("catalog_toolversion", "interface"),
    ("catalog_toolversion", "tool_json"),
]


def _retype(to: str) -> Any:
    def retype(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        quote = schema_editor.quote_name
        for table, column in COLUMNS:
            schema_editor.execute(
                f"ALTER TABLE {quote(table)} ALTER COLUMN {quote(column)} "
                f"TYPE {to} USING {quote(column)}::{to}"
            )

    return retype


def _ordered(default: Any, **kwargs: Any) -> Any:
    return jazzmine_web.studio.fields.OrderedJSONField(blank=True, default=default, **kwargs)


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0013_code_digest_binds_documented_parameters"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(_retype("text"), _retype("jsonb"))],
            state_operations=[
                migrations.AlterField(model_name="tool", name="extra", field=_ordered(dict)),
                migrations.AlterField(model_name="tool", name="parameters", field=_ordered(list)),
                migrations.AlterField(model_name="tool", name="schema", field=_ordered(dict)),
                migrations.AlterField(
                    model_name="toolversion",
                    name="interface",
                    field=jazzmine_web.studio.fields.OrderedJSONField(blank=True, null=True),
                ),
                migrations.AlterField(
                    model_name="toolversion", name="tool_json", field=_ordered(dict)
                ),
            ],
        )
    ]
