"""Create the demo user so that a fresh install can be tried at once."""

from __future__ import annotations

import os
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create (or reset) the demo user and print how to log in."

    def handle(self, *args: Any, **options: Any) -> None:
        username = os.environ.get("JAZZMINE_DEMO_USER", "demo")
        password = os.environ.get("JAZZMINE_DEMO_PASSWORD", "jazzmine-demo")
        user_model = get_user_model()
        user, created = user_model.objects.get_or_create(username=username)
        user.set_password(password)
        user.is_staff = user.is_superuser = True
        user.save()
        verb = "Created" if created else "Reset"
        self.stdout.write(f"{verb} demo user. Log in as {username!r} with password {password!r}.")
