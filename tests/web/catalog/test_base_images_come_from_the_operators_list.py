"""Members choose a base image among the operator's list; anything else is refused."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from jazzmine_web.catalog.services import build_policy, sandbox_create, sandbox_update

pytestmark = pytest.mark.django_db

FOREIGN = [
    "jazzmine/sandbox-other-team:0123456789abcdef-12345678",
    "registry.evil.example/python:3.11",
    "docker.io/library/python:3.11-slim",
]


def _post(**changes):
    data = {
        "name": "scratch", "memory_mb": 256, "cpus": 1, "pids_limit": 128, "timeout_seconds": 30,
        "max_output_bytes": 1_000_000, "base_image": "jazzmine/base:bookworm", "backend": "docker",
    }  # fmt: skip
    return {**data, **changes}


@pytest.mark.parametrize("image", FOREIGN)
def test_the_sandbox_form_refuses_an_image_that_is_not_offered(
    client, team_admin, empty_sandbox, image
) -> None:
    client.force_login(team_admin)
    response = client.post(f"/catalog/sandboxes/{empty_sandbox.pk}/edit/", _post(base_image=image))
    assert response.status_code == 422 and "Select a valid choice" in response.content.decode()
    empty_sandbox.refresh_from_db()
    assert empty_sandbox.base_image == "jazzmine/base:bookworm"


def test_the_form_offers_a_select_of_the_operators_images(
    client, team_admin, empty_sandbox, settings
) -> None:
    settings.JAZZMINE_BASE_IMAGES = ["jazzmine/base:bookworm", "corp/python:3.11"]
    client.force_login(team_admin)
    page = client.get(f"/catalog/sandboxes/{empty_sandbox.pk}/edit/").content.decode()
    assert '<select name="base_image"' in page and "corp/python:3.11" in page
    response = client.post(
        f"/catalog/sandboxes/{empty_sandbox.pk}/edit/", _post(base_image="corp/python:3.11")
    )
    assert response.status_code == 302


@pytest.mark.parametrize("image", FOREIGN)
def test_the_services_refuse_it_on_every_path(team, empty_sandbox, image) -> None:
    with pytest.raises(ValidationError, match="not offered"):
        sandbox_create(team=team, name="other", base_image=image)
    with pytest.raises(ValidationError, match="not offered"):
        sandbox_update(sandbox=empty_sandbox, base_image=image)


def test_the_builder_gets_the_operators_list_and_no_pulls_by_default(settings) -> None:
    settings.JAZZMINE_BASE_IMAGES = ["jazzmine/base:bookworm"]
    policy = build_policy()
    assert policy.base_images == ("jazzmine/base:bookworm",) and policy.allow_pull is False
