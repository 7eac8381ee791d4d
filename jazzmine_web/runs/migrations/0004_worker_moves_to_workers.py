"""The Worker model now belongs to the workers app, which keeps the `runs_worker` table."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0003_workers_claim_and_heartbeat"),
        ("workers", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="Worker")],
            database_operations=[],
        ),
    ]
