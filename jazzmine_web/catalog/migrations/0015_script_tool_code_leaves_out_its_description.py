"""A script tool's description is no part of its code: acceptances of its code carry over.

The description was the docstring of the function generated for a script tool, so editing
the prompt made new code (taken from the LLMs until a new trial, and from its secrets until
an admin accepted it again). An acceptance of a script tool's code as it is today, and an
admin's acceptance of its trial wheels for that code, are carried over to the digest that
leaves the description out; its checksum is the registry's today, and an acceptance of the
stored checksum moves with it. Acceptances of other code stay unmatched, as they were.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


def carry_acceptances_over(apps: Any, schema_editor: Any) -> None:
    from jazzmine_web.catalog.digest_upgrades import script_checksum, script_digest_carried_over

    Tool = apps.get_model("catalog", "Tool")
    alias = schema_editor.connection.alias
    for tool in Tool.objects.using(alias).filter(kind="script"):
        accepted = script_digest_carried_over(tool, tool.accepted_code_digest)
        changes = {
            "accepted_code_digest": accepted,
            "trial_accepted_code_digest": script_digest_carried_over(
                tool, tool.trial_accepted_code_digest
            ),
        }
        checksum = script_checksum(tool)
        if checksum:
            changes["checksum"] = checksum
            carried = accepted != tool.accepted_code_digest
            if carried and tool.always_allow_accepted_checksum == tool.checksum:
                changes["always_allow_accepted_checksum"] = checksum
        if any(getattr(tool, key) != value for key, value in changes.items()):
            Tool.objects.using(alias).filter(pk=tool.pk).update(**changes)


class Migration(migrations.Migration):
    dependencies = [("catalog", "0014_tool_json_keeps_its_keys_order")]

    operations = [migrations.RunPython(carry_acceptances_over, migrations.RunPython.noop)]
