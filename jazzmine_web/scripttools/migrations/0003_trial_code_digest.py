"""A trial counts for, and runs, the code of the whole SHA-256 it was asked for.

`TrialRun.checksum` holds the tool's 16 hex chars, which collide after some 2^32 tries: a
member could make two versions of a script tool with one checksum, have a trial of the
harmless one pass and publish the other on it, or have a trial asked for one run the other
while recorded (and audited) as the first. `code_digest` holds the whole digest
(`Tool.code_digest`), and the publish gate and the trial runner compare it.

As catalog migration 0008 did for acceptances: a trial of the tool's code today (its checksum
is the tool's checksum) keeps counting for that code, its digest taken from the current code,
which is all the checksum vouched for; so a tool published on a pass stays publishable, and a
trial queued now still runs. The others were trials of older code and count for none, as
they did.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations, models


def digest_current_trials(apps: Any, schema_editor: Any) -> None:
    from jazzmine_web.catalog.code_digest import tool_code_digest

    Tool = apps.get_model("catalog", "Tool")
    TrialRun = apps.get_model("scripttools", "TrialRun")
    alias = schema_editor.connection.alias
    tried = TrialRun.objects.using(alias).values("tool_id").distinct()
    for tool in Tool.objects.using(alias).filter(pk__in=tried):
        digest = tool_code_digest(tool)
        if digest:  # code with no digest: no trial vouches for it
            trials = TrialRun.objects.using(alias).filter(tool=tool, checksum=tool.checksum)
            trials.update(code_digest=digest)


class Migration(migrations.Migration):
    dependencies = [
        ("scripttools", "0002_worker_and_heartbeat"),
        # `tool_code_digest` reads the Tool's columns as they are from there on.
        ("catalog", "0009_wheels_accepted_with_dependencies"),
    ]

    operations = [
        migrations.AddField(
            model_name="trialrun",
            name="code_digest",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.RunPython(digest_current_trials, migrations.RunPython.noop),
    ]
