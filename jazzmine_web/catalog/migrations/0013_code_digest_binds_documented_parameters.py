"""A Python tool's code digest binds the parameters its prompt documents.

The documented names are all a script may pass the function; a member who documented a
parameter the admin had accepted as the tool's own (an endpoint) kept the acceptance and its
secrets. Acceptances of a Python tool's code as it is today are carried over to the digest
that names its documented parameters today: what the admin accepted is what runs.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


def carry_acceptances_over(apps: Any, schema_editor: Any) -> None:
    from jazzmine_web.catalog.code_digest import digest_carried_over

    Tool = apps.get_model("catalog", "Tool")
    alias = schema_editor.connection.alias
    for tool in Tool.objects.using(alias).exclude(kind="script").exclude(accepted_code_digest=""):
        carried = digest_carried_over(tool, tool.accepted_code_digest)
        if carried != tool.accepted_code_digest:
            Tool.objects.using(alias).filter(pk=tool.pk).update(accepted_code_digest=carried)


class Migration(migrations.Migration):
    dependencies = [("catalog", "0012_build_status_built")]

    operations = [migrations.RunPython(carry_acceptances_over, migrations.RunPython.noop)]
