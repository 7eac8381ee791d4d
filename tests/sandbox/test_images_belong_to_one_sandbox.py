"""A sandbox's images are its own: pruning one sandbox never removes what another one runs.

Names are unique per team only, so two teams may each have a `reports` sandbox. With an
image key each is filed under (the web passes the sandbox's id), their images live in two
repositories, and each one's builds prune only its own older images.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from jazzmine.bash.sandbox import ensure_bash_image
from jazzmine.core.tools import SandboxConfig, ToolRegistry
from jazzmine.sandbox import SandboxBuilder
from jazzmine.sandbox import builder as builder_module
from jazzmine.sandbox.builder import DERIVED_FROM_LABEL, IMAGE_KEY_LABEL, KEYED_REPOSITORY_PREFIX

pytestmark = pytest.mark.docker
NAME = "reports"


def registry_answering(answer: str) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=NAME))
    registry.register_source(
        f"def report() -> ToolResponse:\n    return ToolResponse(success=True, data={answer!r})\n",
        sandbox=NAME, description="A report.",
    )  # fmt: skip
    return registry


def tags_of(docker_client, key: str) -> set[str]:
    repository = KEYED_REPOSITORY_PREFIX + key
    return {
        tag
        for image in docker_client.images.list(name=repository)
        for tag in image.tags
        if tag.startswith(repository + ":")
    }


@pytest.fixture
def keys(docker_client) -> Iterator[list[str]]:
    """Two image keys no other test or session uses; their images go when the test ends."""
    made = [uuid.uuid4().hex[:12] for _ in range(2)]
    yield made
    for key in made:
        for tag in tags_of(docker_client, key):
            for child in docker_client.images.list(
                filters={"label": f"{DERIVED_FROM_LABEL}={tag}"}
            ):
                docker_client.images.remove(child.id, force=True)
            docker_client.images.remove(tag, force=True)


def test_two_teams_sandboxes_of_one_name_building_in_turn_prune_only_their_own_images(
    docker_client, base_image, cache_dir, keys, monkeypatch
):
    # The newest image only: every build prunes, so any image of the other team in reach goes.
    monkeypatch.setattr(builder_module, "KEEP_IMAGES", 1)
    team_a, team_b = keys

    def build(key: str, answer: str) -> str:
        builder = SandboxBuilder(
            registry_answering(answer), client=docker_client, cache_dir=cache_dir,
            image_keys={NAME: key},
        )  # fmt: skip
        result = builder.ensure_image(NAME)
        assert result.built
        return result.tag

    a1 = build(team_a, "team A v1")
    b1 = build(team_b, "team B v1")
    assert a1.startswith(f"{KEYED_REPOSITORY_PREFIX}{team_a}:") and b1 != a1
    assert docker_client.images.get(a1).labels[IMAGE_KEY_LABEL] == team_a
    b2 = build(team_b, "team B v2")
    assert tags_of(docker_client, team_a) == {a1}  # team B's builds left team A's image
    assert tags_of(docker_client, team_b) == {b2}  # and pruned team B's own older one
    a2 = build(team_a, "team A v2")
    assert tags_of(docker_client, team_a) == {a2}
    assert tags_of(docker_client, team_b) == {b2}


def test_a_prune_untags_an_image_another_sandbox_names_and_leaves_that_ones_bash_image(
    docker_client, image, keys
):
    # One image under both sandboxes' names (the engine reused it as is): for `mine` it is
    # old, for `theirs` it is what runs now, with a bash image built on it.
    mine, theirs = keys
    shared = docker_client.images.get(image)
    for key in keys:
        shared.tag(KEYED_REPOSITORY_PREFIX + key, "shared")
    their_tag = f"{KEYED_REPOSITORY_PREFIX}{theirs}:shared"
    their_bash = ensure_bash_image(their_tag, client=docker_client)

    builder = SandboxBuilder(ToolRegistry(), client=docker_client, image_keys={NAME: mine})
    assert builder.prune(NAME, keep=0) == 1
    assert tags_of(docker_client, mine) == set()
    assert tags_of(docker_client, theirs) == {their_tag}
    assert docker_client.images.get(their_bash).labels[DERIVED_FROM_LABEL] == their_tag


def test_the_current_image_stays_however_old_the_engine_says_it_is(
    docker_client, image, wall_image, keys
):
    # An image the engine reused as is keeps the date it was first made: older than images
    # the sandbox built since, yet the one it runs now.
    key = keys[0]
    made = sorted(
        (docker_client.images.get(tag) for tag in (image, wall_image)),
        key=lambda found: found.attrs["Created"],
    )
    older, newer = (f"{KEYED_REPOSITORY_PREFIX}{key}:{name}" for name in ("older", "newer"))
    made[0].tag(KEYED_REPOSITORY_PREFIX + key, "older")
    made[1].tag(KEYED_REPOSITORY_PREFIX + key, "newer")

    builder = SandboxBuilder(ToolRegistry(), client=docker_client, image_keys={NAME: key})
    assert builder.prune(NAME, keep=1, current=older) == 1
    assert tags_of(docker_client, key) == {older}
    assert newer not in {tag for found in docker_client.images.list() for tag in found.tags}


def test_an_image_key_must_be_one_part_of_an_image_name():
    for bad in ("", "A1", "1/2", "-1", "1-", "x" * 65, "17\n", "1:2", "1--2", "١٧"):
        with pytest.raises(ValueError, match="image key"):
            SandboxBuilder(ToolRegistry(), image_keys={NAME: bad})
    assert SandboxBuilder(ToolRegistry(), image_keys={NAME: "17"}).repository(NAME) == (
        "jazzmine/sandbox/17"
    )
    assert SandboxBuilder(ToolRegistry()).repository(NAME) == "jazzmine/sandbox-reports"
