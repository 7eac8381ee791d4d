"""Fixtures of the admin suites: another team's catalog, and a staff user outside that team."""

from __future__ import annotations

import pytest

from jazzmine_web.catalog.services import sandbox_create, tool_create
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import membership_set, team_create
from tests.web.helpers import staff_browser

# Names only the victim team's rows carry: a page of the attacker's that shows one leaks it.
VAULT = "payroll-vault"
TOOL = "wire_funds"
SOURCE = "def wire_funds(account):\n    return ToolResponse(success=True)\n"
APPS = ("teams", "catalog", "runs", "reviews", "playground")


@pytest.fixture
def ledger(db):
    """The victim: team Ledger, whose sandbox payroll-vault holds the tool wire_funds."""
    team = team_create(name="Ledger", slug="ledger")
    sandbox = sandbox_create(team=team, name=VAULT)
    tool_create(sandbox=sandbox, name=TOOL, description="Wire funds.", source=SOURCE)
    return sandbox


@pytest.fixture
def mallory(outsider):
    """A staff user with every model permission of the studio's apps, admin of her own team only."""
    membership_set(team=team_create(name="Evil", slug="evil"), user=outsider, role=Role.ADMIN)
    return staff_browser(outsider, *APPS)
