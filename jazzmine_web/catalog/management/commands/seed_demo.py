"""Create the demo team, its two people and the `ecommerce` sandbox once, so a fresh install can be tried.

Run on every start by `scripts/run.sh`: it creates what is missing and never touches what
exists, so a team's edits to the demo (tools, secrets, passwords) survive restarts. `--reset`
puts the demo back explicitly: passwords, roles, and the demo module imported again (a new
version of each changed tool; history is kept).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from jazzmine_web.catalog.importer import ImportRefused, source_file_from_path
from jazzmine_web.catalog.models import Sandbox, Tool
from jazzmine_web.catalog.services.imports import tools_import
from jazzmine_web.catalog.services.rules import actor_is_admin
from jazzmine_web.catalog.services.tools import tool_code_accept, tool_update
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import membership_set, team_get_or_create

DEMO_MODULE = Path(settings.BASE_DIR) / "demo" / "ecommerce.py"
DEMO_SANDBOX = "ecommerce"
# The demo's lookups, which change nothing: its admin lets any script call them unread (the
# playground's Auto loop, an agent under "review when a tool that is not always-allowed is
# called"). Changing an order or mailing a customer still needs a person.
DEMO_ALWAYS_ALLOWED = ("get_orders", "get_user", "search_products")


# The README prints these: fine for one person trying the app on their own machine, never for
# a database a team shares (and whose web processes may listen beyond loopback).
PUBLIC_PASSWORDS = {"JAZZMINE_DEMO_PASSWORD": "jazzmine-demo",
                    "JAZZMINE_DEMO_REVIEWER_PASSWORD": "jazzmine-review"}  # fmt: skip


@dataclass(frozen=True)
class DemoPerson:
    """One demo login: who it is, how to log in, and what they may do."""

    username: str
    password: str
    role: str
    superuser: bool
    about: str


def demo_people() -> list[DemoPerson]:
    """Return the demo's two people: an admin who builds and submits, a reviewer who approves."""
    return [
        DemoPerson(
            username=os.environ.get("JAZZMINE_DEMO_USER", "demo"),
            password=os.environ.get(
                "JAZZMINE_DEMO_PASSWORD", PUBLIC_PASSWORDS["JAZZMINE_DEMO_PASSWORD"]
            ),
            role=Role.ADMIN,
            superuser=True,
            about="team admin: catalog, playground, agents",
        ),
        DemoPerson(
            username=os.environ.get("JAZZMINE_DEMO_REVIEWER", "reviewer"),
            password=os.environ.get(
                "JAZZMINE_DEMO_REVIEWER_PASSWORD",
                PUBLIC_PASSWORDS["JAZZMINE_DEMO_REVIEWER_PASSWORD"],
            ),
            role=Role.REVIEWER,
            superuser=False,
            about="reviewer: approves what the admin's agents submit (nobody approves their own)",
        ),
    ]


def _passwords_fit_a_shared_database(*, reset: bool) -> None:
    """Refuse to give a demo login on a shared database a password the README prints.

    The demo admin is a superuser: on a team's database, reached by web processes that may
    listen beyond loopback, `demo` / `jazzmine-demo` would open everything to anyone who
    read the README. There the passwords come from the environment and pass the validators.
    """
    user_model = get_user_model()
    # In demo_people()'s order: the admin's, then the reviewer's.
    for (name, public), person in zip(PUBLIC_PASSWORDS.items(), demo_people(), strict=True):
        if not reset and user_model.objects.filter(username=person.username).exists():
            continue  # kept as it is: its password is not set here
        if person.password == public:
            raise CommandError(
                f"seed_demo on a shared database would give {person.username!r} the password "
                f"the README prints ({public!r}). Set {name} (and the other demo password) to "
                "passwords of your own, or try the demo on the embedded default "
                "(scripts/run.sh)."
            )
        try:
            validate_password(person.password)
        except ValidationError as exc:
            raise CommandError(f"{name}: {' '.join(exc.messages)}") from None


class Command(BaseCommand):
    help = (
        "Create the demo team, users and ecommerce sandbox when missing (never overwrites "
        "a team's changes); --reset puts them back."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--reset",
            action="store_true",
            help="reset the demo passwords and roles and import the demo module again",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        reset = bool(options["reset"])
        if settings.SHARED_DATABASE:
            _passwords_fit_a_shared_database(reset=reset)
        team = team_get_or_create(name="Demo team", slug="demo")
        users = {}
        for person in demo_people():
            users[person.username], verb = self._person(team, person, reset=reset)
            self.stdout.write(
                f"{verb} {person.about}. Log in as {person.username!r} with password "
                f"{person.password!r}" + ("." if verb != "Kept" else " (unless changed since).")
            )
        admin = users[demo_people()[0].username]
        exists = Sandbox.objects.filter(team=team, name=DEMO_SANDBOX).exists()
        if exists and not reset:
            self.stdout.write(f"Kept demo sandbox {DEMO_SANDBOX} as the team left it.")
            return
        try:
            # Through the importer, like any team's module: parsed, never executed. As the
            # demo's admin, who so accepts the code it imports: its secrets reach it. (A demo
            # user the team made no admin imports as a trusted command: nothing accepted.)
            actor = admin if actor_is_admin(actor=admin, team=team) else None
            report = tools_import(
                team=team,
                files=[source_file_from_path(DEMO_MODULE)],
                author=admin,
                sandbox_name=DEMO_SANDBOX,
                actor=actor,
            )
            if actor is not None:
                # The demo's own code, unchanged by the import: accepted as the rest is.
                for tool in Tool.objects.filter(
                    sandbox__team=team, sandbox__name=DEMO_SANDBOX, name__in=report.unchanged
                ):
                    tool_code_accept(tool=tool, actor=actor)
                for tool in Tool.objects.filter(
                    sandbox__team=team,
                    sandbox__name=DEMO_SANDBOX,
                    name__in=DEMO_ALWAYS_ALLOWED,
                    always_allow=False,
                ):
                    tool_update(
                        tool=tool,
                        author=admin,
                        actor=actor,
                        always_allow=True,
                        note="a lookup: any script may call it",
                    )
        except ImportRefused as exc:
            raise CommandError(f"The demo module cannot be imported:\n{exc}") from exc
        self.stdout.write(f"Demo sandbox {DEMO_SANDBOX}: {report.summary()}.")

    def _person(self, team: Any, person: DemoPerson, *, reset: bool) -> tuple[Any, str]:
        """Create a demo user when missing (or reset one); keep an existing one as it is."""
        user_model = get_user_model()
        user, created = user_model.objects.get_or_create(username=person.username)
        if created or reset:
            # Only a password that differs is set again: a new hash of the same password
            # revoked every token of the person (tokens are bound to it), and withdrew what
            # their agents had sent for review, for a reset that changed nothing of theirs.
            if created or not user.check_password(person.password):
                user.set_password(person.password)
            user.is_staff = user.is_superuser = person.superuser
            user.save()
            membership_set(team=team, user=user, role=person.role)
            return user, "Created" if created else "Reset"
        return user, "Kept"
