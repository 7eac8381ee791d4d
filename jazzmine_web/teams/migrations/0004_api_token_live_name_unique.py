from django.db import migrations, models


def number_repeated_names(apps, schema_editor):
    """Give each live token a name of its own before the database holds names unique.

    Tokens made from a shell could repeat a live token's name; the newest keeps it, the
    older ones are numbered ("agent (2)"), so every token still opens the API as before.
    """
    ApiToken = apps.get_model("teams", "ApiToken")
    live = ApiToken.objects.filter(revoked_at__isnull=True).order_by(
        "user_id", "-created_at", "-pk"
    )
    taken: dict[int, set[str]] = {}
    for token in live:
        names = taken.setdefault(token.user_id, set())
        name, number = token.name, 2
        while name in names:
            name = f"{token.name[:90]} ({number})"
            number += 1
        if name != token.name:
            token.name = name
            token.save(update_fields=["name"])
        names.add(name)


class Migration(migrations.Migration):
    dependencies = [
        ("teams", "0003_revoke_reason_unbound"),
    ]

    operations = [
        migrations.RunPython(number_repeated_names, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="apitoken",
            constraint=models.UniqueConstraint(
                condition=models.Q(("revoked_at__isnull", True)),
                fields=("user", "name"),
                name="api_token_live_name_unique",
            ),
        ),
    ]
