"""A submission keeps its body's digest, and both digests are indexed with its sandbox.

Every review page lists the earlier decisions on the same script (its code's SHA-256, or
the body as sent, which assembles to other code once the sandbox's tools change). Comparing
whole bodies scanned every submission of the sandbox; the digests are looked up instead.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.db import migrations, models


def digest_bodies(apps: Any, schema_editor: Any) -> None:
    # Frozen here: the digest of the text as stored (runs.models.code_sha256 today).
    Submission = apps.get_model("reviews", "Submission")
    rows = Submission.objects.using(schema_editor.connection.alias)
    for pk, body in rows.filter(body_sha256="").values_list("pk", "body").iterator():
        digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
        rows.filter(pk=pk).update(body_sha256=digest)


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0012_readings_of_script_tools_without_their_description"),
    ]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="body_sha256",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.RunPython(digest_bodies, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="submission",
            index=models.Index(fields=["sandbox", "code_sha256"], name="reviews_sub_same_code"),
        ),
        migrations.AddIndex(
            model_name="submission",
            index=models.Index(fields=["sandbox", "body_sha256"], name="reviews_sub_same_body"),
        ),
    ]
