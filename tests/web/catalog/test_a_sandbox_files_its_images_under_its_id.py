"""Every image builder the web makes files a sandbox's images under the sandbox's id, after
the deployment's name.

Sandbox names are unique per team only: a repository named after one would be shared by every
team's sandbox of that name, and each one's builds would prune the others' images. Ids are
unique per database only: two deployments on one Docker engine have a sandbox 1 each.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

import jazzmine_web
from jazzmine_web.catalog.services import sandbox_builder, sandbox_create, sandbox_update
from jazzmine_web.teams.services import team_create

pytestmark = pytest.mark.django_db


def test_two_teams_sandboxes_of_one_name_have_two_repositories(team):
    other = team_create(name="Other shop", slug="other-shop")
    ours, theirs = (sandbox_create(team=t, name="reports") for t in (team, other))
    deployment = settings.JAZZMINE_DEPLOYMENT
    assert sandbox_builder(ours).repository("reports") == f"jazzmine/sandbox/{deployment}-{ours.pk}"
    assert (
        sandbox_builder(theirs).repository("reports")
        == f"jazzmine/sandbox/{deployment}-{theirs.pk}"
    )
    # The same (empty) content: one checksum, two tags.
    ours_tag = sandbox_builder(ours).image_tag("reports")
    theirs_tag = sandbox_builder(theirs).image_tag("reports")
    assert ours_tag.split(":")[1] == theirs_tag.split(":")[1] and ours_tag != theirs_tag


def test_two_deployments_sandboxes_of_one_id_have_two_repositories(team, settings):
    sandbox = sandbox_create(team=team, name="reports")
    settings.JAZZMINE_DEPLOYMENT = "shop-prod"
    prod = sandbox_builder(sandbox)
    settings.JAZZMINE_DEPLOYMENT = "shop-staging"
    staging = sandbox_builder(sandbox)
    assert prod.repository("reports") == f"jazzmine/sandbox/shop-prod-{sandbox.pk}"
    assert staging.repository("reports") == f"jazzmine/sandbox/shop-staging-{sandbox.pk}"


def test_a_renamed_sandbox_keeps_its_repository(team):
    sandbox = sandbox_create(team=team, name="reports")
    before = sandbox_builder(sandbox).image_tag("reports")
    sandbox_update(sandbox=sandbox, name="monthly-reports")
    sandbox.refresh_from_db()
    assert sandbox_builder(sandbox).image_tag("monthly-reports") == before


def test_no_web_module_makes_a_builder_of_its_own():
    # One made elsewhere would file the images by name again (see catalog.services.images).
    root = Path(jazzmine_web.__file__).parent
    makers = sorted(
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if "SandboxBuilder(" in path.read_text()
    )
    assert makers == ["catalog/services/images.py"]
