"""The sandbox page tells the truth about the current image: built, building, failed or never.

Runs and trials build a missing image themselves, with no build row; the page asks the engine
(real Docker here) instead of saying "Never built" while the image is there.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import docker
import pytest

from jazzmine_web.catalog.image_truth import ImageTruth, image_truth
from jazzmine_web.catalog.models import BuildStatus
from jazzmine_web.catalog.selectors import sandbox_image_status
from jazzmine_web.catalog.services import (
    image_build_set_status,
    image_build_start,
    sandbox_builder,
    sandbox_create,
    tool_create,
    tool_update,
)

pytestmark = [pytest.mark.django_db, pytest.mark.docker]

BASE = "jazzmine/base:bookworm"


@pytest.fixture
def engine() -> Iterator[docker.DockerClient]:
    client = docker.from_env()
    try:
        client.images.get(BASE)
    except docker.errors.ImageNotFound:
        pytest.fail(f"{BASE} is missing: bash scripts/run.sh bootstraps it")
    yield client
    client.close()


@pytest.fixture
def fresh(team, engine) -> Iterator[tuple[object, str]]:
    """A sandbox whose code no image was ever built for (a unique tool body)."""
    sandbox = sandbox_create(team=team, name="truth-" + uuid.uuid4().hex[:8])
    marker = uuid.uuid4().hex
    tool_create(
        sandbox=sandbox,
        name="ping",
        description="Answer pong",
        source=f'def ping() -> ToolResponse:\n    return ToolResponse(success=True, data="{marker}")\n',
    )
    tag = sandbox_builder(sandbox).image_tag(sandbox.name)
    repository = tag.rsplit(":", 1)[0]

    def clear() -> None:
        for image in engine.images.list(name=repository):
            # Only this sandbox's tags: the same image also carries the shared base's tag.
            for each in image.tags:
                if each.startswith(repository + ":"):
                    engine.images.remove(each, force=True)

    # Images are filed under the sandbox's id, and a test database gives ids again: what an
    # earlier test's sandbox of this id left would read as this one's earlier code.
    clear()
    yield sandbox, tag
    clear()
    assert engine.images.get(BASE)


def page(client, member, sandbox) -> str:
    client.force_login(member)
    return client.get(f"/catalog/sandboxes/{sandbox.pk}/").content.decode()


def test_no_build_and_no_image_reads_never_built(client, member, fresh) -> None:
    sandbox, _ = fresh
    html = page(client, member, sandbox)
    assert 'data-image-state="never_built">never built</span>' in html
    assert "Never built." in html


def test_an_image_a_run_built_reads_up_to_date_not_never_built(
    client, member, fresh, engine
) -> None:
    sandbox, tag = fresh
    repository, name = tag.rsplit(":", 1)
    # What a run's ensure_image leaves behind: the tag in the engine, no build row.
    engine.images.get(BASE).tag(repository, name)
    assert not sandbox.builds.exists()
    html = page(client, member, sandbox)
    assert "Never built" not in html
    assert 'class="badge badge-up_to_date" data-image-state="up_to_date">up to date</span>' in html
    assert f"The engine holds the image of the current code, {tag}" in html


def test_only_older_images_read_needs_rebuild(client, member, fresh, engine) -> None:
    sandbox, tag = fresh
    repository = tag.rsplit(":", 1)[0]
    engine.images.get(BASE).tag(repository, "0000000000000000-older")
    html = page(client, member, sandbox)
    assert 'data-image-state="needs_rebuild">needs rebuild</span>' in html
    assert "The engine holds 1 image(s) of earlier code, none of the current" in html


def test_a_failed_build_reads_failed_unless_the_engine_has_the_image(member, fresh, engine) -> None:
    sandbox, tag = fresh
    build = image_build_start(sandbox=sandbox, user=member, background=False)
    assert image_truth(sandbox, sandbox_image_status(sandbox)).state == ImageTruth.BUILDING
    image_build_set_status(build_id=build.pk, status=BuildStatus.FAILED, error="boom")
    assert image_truth(sandbox, sandbox_image_status(sandbox)).state == ImageTruth.FAILED
    repository, name = tag.rsplit(":", 1)
    engine.images.get(BASE).tag(repository, name)  # a later run built it after all
    truth = image_truth(sandbox, sandbox_image_status(sandbox))
    assert truth.state == ImageTruth.UP_TO_DATE and f"build #{build.pk} failed" in truth.detail


def test_the_tool_page_says_which_image_holds_its_code_as_the_sandbox_page_does(
    client, member, fresh, engine
) -> None:
    # The tool page read the build rows alone: "No built image holds this version yet"
    # beside a sandbox page saying "up to date" (a run had built the image).
    sandbox, tag = fresh
    tool = sandbox.tools.get()
    client.force_login(member)
    said = client.get(f"/catalog/tools/{tool.pk}/").content.decode()
    assert "No built image holds this version yet" in said
    repository, name = tag.rsplit(":", 1)
    engine.images.get(BASE).tag(repository, name)  # what a run's ensure_image leaves
    said = client.get(f"/catalog/tools/{tool.pk}/").content.decode()
    assert "No built image holds this version yet" not in said
    assert f'This code is in the current image of: <a href="/catalog/sandboxes/{sandbox.pk}/">' in (
        said
    )
    # Code changed: the image holds the old code, not the tool's as it is now.
    tool_update(tool=tool, source=tool.source.replace('data="', 'data="new '), actor=member)
    tool.refresh_from_db()
    said = client.get(f"/catalog/tools/{tool.pk}/").content.decode()
    assert "No built image holds this version yet" in said
