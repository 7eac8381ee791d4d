"""Two teams' sandboxes of one name keep their own images (real builds, real engine).

Sandbox names are unique per team only. Filed by name, both sandboxes' images shared one
repository, and the prune after each build kept the newest images of it whoever they were:
one team editing and rebuilding its sandbox removed the other team's current image.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import docker
import docker.errors
import pytest

from jazzmine.sandbox import builder as builder_module
from jazzmine_web.catalog.models import BuildStatus
from jazzmine_web.catalog.services import (
    image_build_run,
    image_build_start,
    sandbox_create,
    tool_create,
    tool_update,
)
from jazzmine_web.teams.services import team_create

pytestmark = [pytest.mark.django_db, pytest.mark.docker]


@pytest.fixture
def engine() -> Iterator[docker.DockerClient]:
    client = docker.from_env()
    yield client
    client.close()


@pytest.fixture
def made(engine) -> Iterator[list[str]]:
    """The tags the test's builds made; removed when it ends (the images of its sandboxes)."""
    tags: list[str] = []
    yield tags
    for tag in tags:
        try:
            engine.images.remove(tag, force=True)
        except docker.errors.ImageNotFound:
            pass  # pruned already


def test_one_teams_rebuilds_never_remove_another_teams_image_and_prune_its_own(
    team, member, engine, made, monkeypatch
):
    # The newest image only: every build prunes, so any image of the other team in reach goes.
    monkeypatch.setattr(builder_module, "KEEP_IMAGES", 1)
    name = "reports-" + uuid.uuid4().hex[:8]  # one name, no other test's
    marker = uuid.uuid4().hex
    other = team_create(name="Other shop", slug="other-shop")
    ours, theirs = (sandbox_create(team=t, name=name) for t in (team, other))
    tools = {
        sandbox.pk: tool_create(
            sandbox=sandbox, name="report", description="A report.", source=_source(marker, "v1")
        )
        for sandbox in (ours, theirs)
    }

    def build(sandbox, version: str) -> str:
        tool = tools[sandbox.pk]
        if version != "v1":
            tool_update(tool=tool, source=_source(marker, version))
        row = image_build_run(
            build_id=image_build_start(sandbox=sandbox, user=member, background=False).pk
        )
        assert row.status == BuildStatus.SUCCEEDED, row.log
        made.append(row.tag)
        return row.tag

    def exists(tag: str) -> bool:
        try:
            engine.images.get(tag)
        except docker.errors.ImageNotFound:
            return False
        return True

    our_first = build(ours, "v1")
    their_first = build(theirs, "v1")
    their_second = build(theirs, "v2")
    assert exists(our_first), "the other team's rebuild removed this team's current image"
    assert their_first != our_first  # the same code, yet an image of its own
    assert exists(their_second) and not exists(their_first)  # its own older image went
    our_second = build(ours, "v2")
    assert exists(our_second) and not exists(our_first)
    assert exists(their_second)


def _source(marker: str, version: str) -> str:
    return (
        "def report() -> ToolResponse:\n"
        f"    return ToolResponse(success=True, data={marker + version!r})\n"
    )
