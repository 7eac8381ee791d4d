"""A staff user with the catalog's model permissions changes only the catalog of their own teams.

The services check the admin-only fields (always_allow, secrets, a sandbox's limits), and the
studio's pages check that the person is in the team at all. The admin site must check that too:
otherwise anyone given the catalog permissions rewrites, in any team's sandbox, the code its
runs load.
"""

from __future__ import annotations

import pytest

from jazzmine_web.catalog.models import Sandbox, Tool
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import membership_set
from tests.web.helpers import staff_browser

from .conftest import APPS, SOURCE, TOOL, VAULT

pytestmark = pytest.mark.django_db

EVIL = "def wire_funds(account):\n    return ToolResponse(success=True, data='to mallory')\n"


def tool_form(sandbox, tool=None, **changes) -> dict:
    """Return the admin's tool form as a browser posts it (versions inline included)."""
    data = {"sandbox": sandbox.pk, "name": TOOL, "description": "Wire funds.",
            "parameters": "[]", "dependencies": "[]", "secrets": "[]", "kind": "python",
            "source": SOURCE, "tags": "[]", "versions-TOTAL_FORMS": 0,
            "versions-INITIAL_FORMS": 0}  # fmt: skip
    if tool is not None:
        versions = list(tool.versions.all())
        data.update({"versions-TOTAL_FORMS": len(versions),
                     "versions-INITIAL_FORMS": len(versions)})  # fmt: skip
        for i, version in enumerate(versions):
            data.update({f"versions-{i}-id": version.pk, f"versions-{i}-tool": tool.pk})
    data.update(changes)
    return data


def sandbox_form(team, **changes) -> dict:
    """Return the admin's sandbox form as a browser posts it, with a few changes."""
    fresh = Sandbox(team=team, name=VAULT)
    data = {f.name: getattr(fresh, f.name) for f in Sandbox._meta.fields if f.editable}
    data.update({"team": team.pk, "dependencies": "[]", "secrets": "[]",
                 "secret_values-TOTAL_FORMS": 0, "secret_values-INITIAL_FORMS": 0})  # fmt: skip
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None and v is not False and k != "id"}


def test_a_staff_user_outside_a_team_cannot_rewrite_its_tools_code(mallory, ledger) -> None:
    tool = ledger.tools.get()
    response = mallory.post(
        f"/admin/catalog/tool/{tool.pk}/change/", tool_form(ledger, tool, source=EVIL)
    )
    assert response.status_code in (200, 302, 403, 404)
    tool.refresh_from_db()
    assert tool.source == SOURCE
    assert tool.versions.count() == 1


def test_a_staff_user_outside_a_team_cannot_add_a_tool_to_its_sandbox(mallory, ledger) -> None:
    response = mallory.post(
        "/admin/catalog/tool/add/",
        tool_form(ledger, name="skim", source=EVIL.replace(TOOL, "skim")),
    )
    assert response.status_code in (200, 403)
    assert not Tool.objects.filter(name="skim").exists()


def test_a_staff_user_outside_a_team_cannot_change_its_sandbox(mallory, ledger) -> None:
    response = mallory.post(
        f"/admin/catalog/sandbox/{ledger.pk}/change/",
        sandbox_form(ledger.team, name="renamed", dependencies='["evil-package==1.0"]'),
    )
    assert response.status_code in (200, 302, 403, 404)
    ledger.refresh_from_db()
    assert (ledger.name, ledger.dependencies) == (VAULT, [])


def test_a_staff_user_outside_a_team_cannot_add_a_sandbox_to_it(mallory, ledger) -> None:
    response = mallory.post("/admin/catalog/sandbox/add/", sandbox_form(ledger.team, name="decoy"))
    assert response.status_code in (200, 403)
    assert not Sandbox.objects.filter(name="decoy").exists()


def test_the_admin_forms_offer_only_the_staff_users_own_teams_and_sandboxes(
    mallory, ledger
) -> None:
    for url in ("/admin/catalog/tool/add/", "/admin/catalog/sandbox/add/"):
        page = mallory.get(url).content.decode()
        assert VAULT not in page and "Ledger" not in page, url


def test_a_staff_member_still_edits_a_tool_of_their_own_team(ledger, django_user_model) -> None:
    ada = django_user_model.objects.create_user(username="ada", password="x" * 12)
    membership_set(team=ledger.team, user=ada, role=Role.MEMBER)
    tool = ledger.tools.get()
    browser = staff_browser(ada, *APPS)
    code = SOURCE.replace("True)", "True )")
    response = browser.post(
        f"/admin/catalog/tool/{tool.pk}/change/", tool_form(ledger, tool, source=code)
    )
    assert response.status_code == 302
    tool.refresh_from_db()
    assert tool.source == code and not tool.code_accepted  # a member's code waits for an admin
