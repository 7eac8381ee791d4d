"""A deployment that is gone takes its images with it, and never another deployment's.

Test sessions and benchmarks are deployments of their own on the one engine; their sandbox
images are filed under their name (`jazzmine.sandbox.key`). Kept, they piled up by the
thousand and slowed every listing. `deployment_images_remove` removes one deployment's:
images made from another first (the engine refuses the other order), none a container uses,
none whose key only shares the beginning of the name.
"""

from __future__ import annotations

import io
import uuid

import docker.errors
import pytest

from jazzmine.sandbox.builder import (
    DERIVED_FROM_LABEL,
    IMAGE_KEY_LABEL,
    deployment_images_remove,
)

pytestmark = pytest.mark.docker


def labelled_image(client, base: str, tag: str | None, labels: dict[str, str]) -> str:
    """Make an image from `base` carrying `labels` (no layer, only its configuration)."""
    lines = [f"FROM {base}", *(f'LABEL "{k}"="{v}"' for k, v in labels.items())]
    image, _ = client.images.build(
        fileobj=io.BytesIO("\n".join(lines).encode()), tag=tag, rm=True, nocache=True
    )
    return image.id


def exists(client, ref: str) -> bool:
    try:
        client.images.get(ref)
    except docker.errors.ImageNotFound:
        return False
    return True


def test_a_deployments_images_go_derived_first_and_another_deployments_stay(
    docker_client, base_image
):
    name = f"gone{uuid.uuid4().hex[:8]}"
    repo = f"jazzmine-test-{name}"
    python = labelled_image(
        docker_client, base_image, f"{repo}:python", {IMAGE_KEY_LABEL: f"{name}-1"}
    )
    # Made from the first, listed before it or after: it must go first either way.
    derived = labelled_image(
        docker_client, f"{repo}:python", f"{repo}:bash",
        {IMAGE_KEY_LABEL: f"{name}-1", DERIVED_FROM_LABEL: f"{repo}:python"},
    )  # fmt: skip
    untagged = labelled_image(docker_client, base_image, None, {IMAGE_KEY_LABEL: f"{name}-2"})
    # Another deployment whose name starts with this one's, and one whose key is inside it.
    longer = labelled_image(
        docker_client, base_image, f"{repo}:longer", {IMAGE_KEY_LABEL: f"{name}x-1"}
    )
    inside = labelled_image(
        docker_client, base_image, f"{repo}:inside", {IMAGE_KEY_LABEL: f"other-{name}-1"}
    )
    used = labelled_image(docker_client, base_image, f"{repo}:used", {IMAGE_KEY_LABEL: f"{name}-3"})
    container = docker_client.containers.create(used, command=["true"])
    try:
        removed = deployment_images_remove(docker_client, f"{name}-")
        assert removed == 3
        for gone in (python, derived, untagged):
            assert not exists(docker_client, gone)
        for kept in (longer, inside, used):
            assert exists(docker_client, kept), "another deployment's image, or one in use"
        # Twice in a row: nothing more to remove, the one in use still there.
        assert deployment_images_remove(docker_client, f"{name}-") == 0
        assert exists(docker_client, used)
    finally:
        container.remove(force=True)
        for image in (longer, inside, used, derived, python, untagged):
            try:
                docker_client.images.remove(image, force=True)
            except docker.errors.ImageNotFound:
                pass


def test_an_empty_prefix_naming_every_deployment_is_refused(docker_client):
    with pytest.raises(ValueError, match="every deployment"):
        deployment_images_remove(docker_client, "")
