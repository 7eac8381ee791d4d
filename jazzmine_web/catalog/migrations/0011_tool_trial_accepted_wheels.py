"""A script tool keeps the wheel files an admin accepted for trials of one code of it.

A script tool with dependencies is tried in an image holding them, and gets its secrets
there only beside wheel files an admin accepted; the sandbox page offers only the files of
its own image, built from published tools, and the tool is published only after a trial
passes. Rows from before accept nothing: `trial_accepted_wheels` None, bound to no code.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0010_image_build_digest"),
    ]

    operations = [
        migrations.AddField(
            model_name="tool",
            name="trial_accepted_code_digest",
            field=models.CharField(blank=True, editable=False, max_length=64),
        ),
        migrations.AddField(
            model_name="tool",
            name="trial_accepted_wheels",
            field=models.JSONField(blank=True, default=None, editable=False, null=True),
        ),
    ]
