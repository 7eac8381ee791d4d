"""Create the demo team, user and `ecommerce` sandbox so that a fresh install can be tried at once."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from jazzmine_web.catalog.importer import ImportRefused, source_file_from_path
from jazzmine_web.catalog.services import tools_import
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import membership_set, team_get_or_create

DEMO_MODULE = Path(settings.BASE_DIR) / "demo" / "ecommerce.py"


class Command(BaseCommand):
    help = "Create (or reset) the demo user, team and ecommerce sandbox; print how to log in."

    def handle(self, *args: Any, **options: Any) -> None:
        username = os.environ.get("JAZZMINE_DEMO_USER", "demo")
        password = os.environ.get("JAZZMINE_DEMO_PASSWORD", "jazzmine-demo")
        user_model = get_user_model()
        user, created = user_model.objects.get_or_create(username=username)
        user.set_password(password)
        user.is_staff = user.is_superuser = True
        user.save()

        team = team_get_or_create(name="Demo team", slug="demo")
        # Admin includes reviewer and member: the demo user can do everything.
        membership_set(team=team, user=user, role=Role.ADMIN)
        try:
            # Through the importer, like any team's module: parsed, never executed.
            report = tools_import(
                team=team,
                files=[source_file_from_path(DEMO_MODULE)],
                author=user,
                sandbox_name="ecommerce",
            )
        except ImportRefused as exc:
            raise CommandError(f"The demo module cannot be imported:\n{exc}") from exc
        self.stdout.write(f"Demo sandbox ecommerce: {report.summary()}.")
        verb = "Created" if created else "Reset"
        self.stdout.write(f"{verb} demo user. Log in as {username!r} with password {password!r}.")
