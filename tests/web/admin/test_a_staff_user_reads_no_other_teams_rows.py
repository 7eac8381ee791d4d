"""A staff user's admin pages show the rows of their own teams only, as the studio does.

The studio shows a team's sandboxes, tools, versions, builds, runs, submissions, audit trail,
review settings, playground sessions and members to that team alone. The admin's view
permission is no team role: given it (a team admin is given the teams' permissions to manage
their members), a staff user read every team's tool code, submitted scripts and run outputs,
in the lists, the filters' choices and the pages of each row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from jazzmine_web.catalog.models import ImageBuild, SecretValue
from jazzmine_web.playground.models import PlaygroundSession
from jazzmine_web.reviews.models import AuditEntry, SandboxReviewSettings, Submission
from jazzmine_web.runs.services import run_create
from jazzmine_web.teams.models import Membership, Role
from tests.web.helpers import teammate

from .conftest import VAULT

pytestmark = pytest.mark.django_db


def _submission(sandbox) -> Submission:
    return Submission.objects.create(
        sandbox=sandbox, task="Pay the staff", body="emit_result(1)\n", script="emit_result(1)\n",
        code_sha256="0" * 64, policy="always", status="pending",
    )  # fmt: skip


def _member_of(sandbox):
    return teammate(sandbox.team, Role.MEMBER, username="ledger_clerk")


# model path in the admin -> the victim team's row of that model
ROWS: dict[str, Callable[[Any], Any]] = {
    "catalog/sandbox": lambda s: s,
    "catalog/tool": lambda s: s.tools.get(),
    "catalog/toolversion": lambda s: s.tools.get().versions.get(),
    "catalog/secretvalue": lambda s: SecretValue.objects.create(
        sandbox=s, name="PAYROLL_KEY", ciphertext="c"
    ),
    "catalog/imagebuild": lambda s: ImageBuild.objects.create(sandbox=s, checksum="0" * 16),
    "runs/run": lambda s: run_create(
        sandbox=s, user=_member_of(s), body="emit_result(1)\n", start=False
    ),
    "reviews/submission": _submission,
    "reviews/auditentry": lambda s: AuditEntry.objects.create(
        sandbox=s, submission=_submission(s), action="approved", actor_label="clerk"
    ),
    "reviews/sandboxreviewsettings": lambda s: SandboxReviewSettings.objects.create(sandbox=s),
    "playground/playgroundsession": lambda s: PlaygroundSession.objects.create(
        user=_member_of(s), sandbox=s, task="Pay the staff"
    ),
    "teams/team": lambda s: s.team,
    "teams/membership": lambda s: Membership.objects.get(user=_member_of(s)),
}


@pytest.mark.parametrize("path", list(ROWS))
def test_a_staff_user_sees_no_row_of_a_team_they_are_not_in(path, mallory, ledger) -> None:
    row = ROWS[path](ledger)
    listing = mallory.get(f"/admin/{path}/")
    assert listing.status_code == 200
    page = listing.content.decode()
    assert VAULT not in page and "Ledger" not in page  # neither a row nor a filter's choice
    for view in ("change", "history", "delete"):
        response = mallory.get(f"/admin/{path}/{row.pk}/{view}/")
        assert response.status_code != 200, view
        assert VAULT not in response.content.decode(), view
