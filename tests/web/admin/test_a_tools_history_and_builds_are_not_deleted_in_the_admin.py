"""A tool's versions and a sandbox's image builds are records: the admin never deletes one.

A version is an immutable snapshot of a tool (its code, needs and prompt); the history page,
its diffs and the audit name versions by number. Deleted in the admin, a member's code change
vanished from the history (the next diff is against an older version) and the next version
took its number. A build is its worker's, as a run is.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.catalog.models import ImageBuild, Tool, ToolVersion
from jazzmine_web.catalog.services import tool_update
from jazzmine_web.teams.models import Role
from tests.web.helpers import staff_browser, teammate

from .conftest import APPS, SOURCE

pytestmark = pytest.mark.django_db


@pytest.fixture(params=["team admin", "superuser"])
def browser(request, ledger, django_user_model) -> Client:
    if request.param == "superuser":
        root = django_user_model.objects.create_superuser(username="root", password="x" * 12)
        client = Client()
        client.force_login(root)
        return client
    return staff_browser(teammate(ledger.team, Role.ADMIN, username="ledger_boss"), *APPS)


def test_nobody_deletes_a_tools_version_in_the_admin(browser, ledger) -> None:
    tool = ledger.tools.get()
    tool_update(tool=tool, source=SOURCE.replace("True)", "True )"), note="a member's change")
    version = tool.versions.get(number=2)
    response = browser.post(f"/admin/catalog/toolversion/{version.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    response = browser.post(
        "/admin/catalog/toolversion/",
        {"action": "delete_selected", "_selected_action": [version.pk], "post": "yes"},
    )
    assert response.status_code in (200, 302, 403)
    assert ToolVersion.objects.filter(pk=version.pk).exists()


def test_nobody_deletes_an_image_build_in_the_admin(browser, ledger) -> None:
    build = ImageBuild.objects.create(sandbox=ledger, checksum="0" * 16, worker="worker@a")
    response = browser.post(f"/admin/catalog/imagebuild/{build.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    response = browser.post(
        "/admin/catalog/imagebuild/",
        {"action": "delete_selected", "_selected_action": [build.pk], "post": "yes"},
    )
    assert response.status_code in (200, 302, 403)
    assert ImageBuild.objects.filter(pk=build.pk).exists()


def test_a_team_admin_still_deletes_a_tool_with_its_history_in_the_admin(browser, ledger) -> None:
    tool = ledger.tools.get()
    response = browser.post(f"/admin/catalog/tool/{tool.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Tool.objects.filter(pk=tool.pk).exists()
    assert not ToolVersion.objects.filter(tool_id=tool.pk).exists()
