"""A build is the image of the sandbox content of the whole digest it built, for Accept and status.

A build recorded the sandbox's checksum, 16 hex chars, and the Accept button of the
dependencies bound the wheel files of the newest build of the current checksum, and the image
status called that build's image the current one. Two contents of one checksum take some 2^32
tries to find (minutes of one core): after a build of one, the sandbox page of the other
offered the first image's wheel files for Accept, and said its image was up to date. Now a
build records the whole digest of the content its worker built (`sandbox_digest`), and both
decide by it; a build recorded before builds carried it is never what Accept binds.

A collision cannot be ground in test time: the tests write the row state one makes, a build of
other content whose checksum column is the sandbox's checksum now. The builder stands in for
the engine and reports the wheel files a real build labels its image with.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine.sandbox import BuildResult
from jazzmine.sandbox.wheels import wheels_digest
from jazzmine_web.catalog.models import BuildStatus, ImageBuild, Sandbox
from jazzmine_web.catalog.selectors import ImageStatus, sandbox_image_status
from jazzmine_web.catalog.services import (
    image_build_run,
    image_build_start,
    registry_for_sandbox,
    sandbox_builder,
    sandbox_update,
    tool_update,
)

pytestmark = pytest.mark.django_db

WHEELS = ["jzlock-1.0-py3-none-any.whl " + "a" * 64]


@pytest.fixture
def shop(ecommerce, admin) -> Sandbox:
    sandbox_update(sandbox=ecommerce, actor=admin, dependencies=["jzlock==1.0"])
    return ecommerce


class LabelledBuilder:
    """Builds as the engine does, as far as the build row sees: the tag of the content it was
    given, and the wheel files the image's label lists."""

    def __init__(self, sandbox: Sandbox, registry) -> None:
        self.builder = sandbox_builder(sandbox, registry=registry)

    def ensure_image(self, name, *, on_log, interrupt=None) -> BuildResult:
        tag = self.builder.image_tag(name)
        on_log(f"built {tag}")
        return BuildResult(tag=tag, built=True, seconds=0.1, wheels=tuple(WHEELS))


def build(sandbox: Sandbox, user, *, before_the_worker=lambda: None) -> ImageBuild:
    """Press Build, and let a worker run it (after `before_the_worker`)."""
    queued = image_build_start(sandbox=sandbox, user=user, background=False)
    before_the_worker()
    done = image_build_run(
        build_id=queued.pk, builder_factory=lambda registry: LabelledBuilder(sandbox, registry)
    )
    assert done.status == BuildStatus.SUCCEEDED, done.log
    return done


def change_the_code(sandbox: Sandbox, user) -> None:
    tool = sandbox.tools.get(name="get_user")
    tool_update(tool=tool, source=tool.source.replace("Ada Lovelace", "Ada King"), actor=user)


def the_checksum_is_the_sandboxs_now(build: ImageBuild) -> None:
    """Leave the row as a build of content that shares the sandbox's checksum now leaves it."""
    checksum = registry_for_sandbox(build.sandbox).sandbox_checksum(build.sandbox.name)
    ImageBuild.objects.filter(pk=build.pk).update(checksum=checksum)
    build.refresh_from_db()


def sandbox_page(client: Client, sandbox: Sandbox) -> str:
    return client.get(f"/catalog/sandboxes/{sandbox.pk}/").content.decode()


def accept_post(client: Client, sandbox: Sandbox, wheels: str) -> str:
    url = f"/catalog/sandboxes/{sandbox.pk}/accept-dependencies/"
    data = {"dependency": list(sandbox.dependencies), "wheels": wheels}
    return client.post(url, data, follow=True).content.decode()


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_accept_binds_no_wheel_file_of_other_content_of_the_same_checksum(shop, admin) -> None:
    client = browser(admin)
    other = build(shop, admin)
    change_the_code(shop, admin)
    the_checksum_is_the_sandboxs_now(other)

    page = sandbox_page(client, shop)
    assert 'id="wheels-unbuilt"' in page and WHEELS[0] not in page
    assert "changed since you looked" in accept_post(client, shop, wheels_digest(WHEELS))
    shop.refresh_from_db()
    assert shop.accepted_wheels is None

    build(shop, admin)  # a build of this content: its files are the ones offered now
    assert WHEELS[0] in sandbox_page(client, shop)
    accept_post(client, shop, wheels_digest(WHEELS))
    shop.refresh_from_db()
    assert shop.accepted_wheels == WHEELS


def test_the_image_of_other_content_of_the_same_checksum_is_not_up_to_date(shop, admin) -> None:
    other = build(shop, admin)
    assert sandbox_image_status(shop).code == ImageStatus.UP_TO_DATE
    change_the_code(shop, admin)
    the_checksum_is_the_sandboxs_now(other)
    status = sandbox_image_status(shop)
    assert status.code == ImageStatus.NEEDS_REBUILD and status.checksum == other.checksum


def test_a_build_names_the_content_its_worker_built_not_the_content_queued(shop, admin) -> None:
    """The code changed after Build was pressed, before a worker took the build: the image
    is of the new code, and so are its wheel files."""
    client = browser(admin)
    done = build(shop, admin, before_the_worker=lambda: change_the_code(shop, admin))
    assert sandbox_image_status(shop).code == ImageStatus.UP_TO_DATE
    assert WHEELS[0] in sandbox_page(client, shop)
    registry = registry_for_sandbox(shop)
    assert done.digest == registry.sandbox_digest(shop.name)
    assert done.checksum == registry.sandbox_checksum(shop.name)


def test_a_build_recorded_before_builds_carried_their_digest_is_never_what_accept_binds(
    shop, admin
) -> None:
    """Migration 0010 leaves their digest empty. Its image's tag names the whole digest the
    builder built: the status reads it and says up to date; Accept waits for a build."""
    client = browser(admin)
    registry = registry_for_sandbox(shop)
    tag = sandbox_builder(shop, registry=registry).image_tag(shop.name)
    older = ImageBuild.objects.create(
        sandbox=shop, checksum=registry.sandbox_checksum(shop.name), tag=tag,
        status=BuildStatus.SUCCEEDED, wheels=WHEELS,
    )  # fmt: skip
    assert sandbox_image_status(shop).build == older
    assert sandbox_image_status(shop).code == ImageStatus.UP_TO_DATE
    page = sandbox_page(client, shop)
    assert 'id="wheels-unbuilt"' in page and WHEELS[0] not in page
    assert "changed since you looked" in accept_post(client, shop, wheels_digest(WHEELS))
    shop.refresh_from_db()
    assert shop.accepted_wheels is None

    # A tag from before tags carried the whole digest names no content: that image is not
    # the one runs look for, so it does need a rebuild.
    ImageBuild.objects.filter(pk=older.pk).update(
        tag=tag.rsplit(":", 1)[0] + ":" + "0" * 16 + "-1a2b3c4d"
    )
    assert sandbox_image_status(shop).code == ImageStatus.NEEDS_REBUILD
