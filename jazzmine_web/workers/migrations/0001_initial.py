"""The Worker model moves here from the runs app; its table stays where it is."""

from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("runs", "0003_workers_claim_and_heartbeat"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Worker",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("name", models.CharField(max_length=200, unique=True)),
                        (
                            "boot",
                            models.CharField(
                                help_text="Changes each time the process starts.", max_length=32
                            ),
                        ),
                        ("hostname", models.CharField(blank=True, max_length=200)),
                        ("pid", models.PositiveIntegerField(default=0)),
                        ("docker_host", models.CharField(blank=True, max_length=300)),
                        ("concurrency", models.PositiveIntegerField(default=1)),
                        ("started_at", models.DateTimeField()),
                        ("heartbeat_at", models.DateTimeField()),
                        ("stopped_at", models.DateTimeField(blank=True, null=True)),
                    ],
                    options={
                        "ordering": ["name"],
                        "db_table": "runs_worker",
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
