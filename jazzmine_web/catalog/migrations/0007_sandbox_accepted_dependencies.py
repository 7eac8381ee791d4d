"""A sandbox's dependencies are accepted by an admin, as a tool's code is.

Their wheels load into every run's process, so a secret reaches a run only while each of the
sandbox's dependencies is one an admin accepted. Nothing is accepted here: who added today's
dependencies is not known, so a sandbox that has any withholds its secrets until an admin
presses Accept on its page (fail closed). A sandbox without dependencies has nothing to accept.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0006_code_acceptance"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="sandbox",
            name="accepted_dependencies",
            field=models.JSONField(blank=True, default=list, editable=False),
        ),
        migrations.AddField(
            model_name="sandbox",
            name="accepted_dependencies_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="sandbox",
            name="accepted_dependencies_by",
            field=models.ForeignKey(
                blank=True,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
    ]
