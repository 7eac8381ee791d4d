"""A trial records the wheel files of the image it ran in: what the tool page offers to accept.

Trials from before say nothing (None), so their page offers nothing: the next trial records
its files.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("scripttools", "0003_trial_code_digest"),
    ]

    operations = [
        migrations.AddField(
            model_name="trialrun",
            name="image_wheels",
            field=models.JSONField(blank=True, default=None, null=True),
        ),
    ]
