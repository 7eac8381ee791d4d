"""Build pressed while a build of earlier content runs builds the code as it is now.

Build reused whatever build of the sandbox was queued or running. A tool changed while a
build ran: pressing Build again said "Build #6 is running" of that build, which installed
the old code, and the new code got no image until someone pressed Build once more after it.
A build in progress is reused only when it builds the content as it is now.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.catalog.models import BuildStatus, ImageBuild
from jazzmine_web.catalog.selectors import ImageStatus, sandbox_image_status
from jazzmine_web.catalog.services import image_build_set_status, image_build_start
from tests.web.helpers import signed_in

from .test_a_build_counts_for_the_whole_digest_of_the_content_it_built import change_the_code

pytestmark = pytest.mark.django_db


def press_build(client: Client, sandbox) -> str:
    url = f"/catalog/sandboxes/{sandbox.pk}/build/"
    return client.post(url, headers={"HX-Request": "true"}).content.decode()


@pytest.fixture
def client(admin) -> Client:
    return signed_in(admin)


@pytest.fixture
def no_task(monkeypatch):
    """Builds stay queued: the test reads the rows a press leaves, with no worker taking them."""
    monkeypatch.setattr(
        "jazzmine_web.catalog.services.builds.task_send_after_commit", lambda *a, **k: None
    )


def test_build_after_a_change_queues_the_new_code(ecommerce, admin, client, no_task) -> None:
    old = image_build_start(sandbox=ecommerce, user=admin, background=False)
    image_build_set_status(build_id=old.pk, status=BuildStatus.BUILDING)
    assert sandbox_image_status(ecommerce).code == ImageStatus.BUILDING

    change_the_code(ecommerce, admin)
    # The page no longer calls the old build this code's: it offers Build.
    status = sandbox_image_status(ecommerce)
    assert status.code == ImageStatus.NEEDS_REBUILD, status
    page = client.get(f"/catalog/sandboxes/{ecommerce.pk}/").content.decode()
    assert 'id="build-button">Build<' in page  # not disabled
    press_build(client, ecommerce)
    press_build(client, ecommerce)  # pressed twice: one build of the new code
    new = ecommerce.builds.exclude(pk=old.pk)
    assert new.count() == 1
    assert new.get().digest != old.digest and new.get().status == BuildStatus.QUEUED
    status = sandbox_image_status(ecommerce)
    assert status.code == ImageStatus.BUILDING and status.build.pk == new.get().pk
    page = client.get(f"/catalog/sandboxes/{ecommerce.pk}/").content.decode()
    assert f"Build #{new.get().pk} is running" in page
    assert ImageBuild.objects.get(pk=old.pk).status == BuildStatus.BUILDING  # left to end


def test_build_of_the_same_code_is_reused(ecommerce, admin, client, no_task) -> None:
    press_build(client, ecommerce)
    press_build(client, ecommerce)
    assert ecommerce.builds.count() == 1
    assert sandbox_image_status(ecommerce).code == ImageStatus.BUILDING
