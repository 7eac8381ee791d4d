"""A trial's pass keeps counting for its script tool's code, now read without its description.

The description left the code generated for a script tool (catalog 0015): a trial of the
code as it is today carries over to the new digest and checksum, so a tool passed and not yet
published stays publishable. Trials of other code count for none, as they did.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


def carry_trials_over(apps: Any, schema_editor: Any) -> None:
    from jazzmine_web.catalog.digest_upgrades import script_checksum, script_digest_carried_over

    Tool = apps.get_model("catalog", "Tool")
    TrialRun = apps.get_model("scripttools", "TrialRun")
    alias = schema_editor.connection.alias
    tried = TrialRun.objects.using(alias).values("tool_id").distinct()
    for tool in Tool.objects.using(alias).filter(pk__in=tried, kind="script"):
        for digest in set(
            TrialRun.objects.using(alias).filter(tool=tool).values_list("code_digest", flat=True)
        ):
            carried = script_digest_carried_over(tool, digest)
            if carried != digest:
                trials = TrialRun.objects.using(alias).filter(tool=tool, code_digest=digest)
                trials.update(code_digest=carried, checksum=script_checksum(tool))


class Migration(migrations.Migration):
    dependencies = [
        ("scripttools", "0004_trial_image_wheels"),
        ("catalog", "0015_script_tool_code_leaves_out_its_description"),
    ]

    operations = [migrations.RunPython(carry_trials_over, migrations.RunPython.noop)]
