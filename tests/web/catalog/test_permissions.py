from __future__ import annotations

import pytest

from jazzmine_web.catalog.models import ImageBuild
from jazzmine_web.catalog.services import image_build_start

pytestmark = pytest.mark.django_db


@pytest.fixture
def urls(ecommerce):
    tool = ecommerce.tools.get(name="get_user")
    s, t = ecommerce.pk, tool.pk
    return {
        "get": [
            f"/catalog/sandboxes/{s}/",
            f"/catalog/sandboxes/{s}/edit/",
            f"/catalog/sandboxes/{s}/image/",
            f"/catalog/sandboxes/{s}/export.py",
            f"/catalog/sandboxes/{s}/tools/new/",
            f"/catalog/tools/{t}/",
            f"/catalog/tools/{t}/edit/",
            f"/catalog/tools/{t}/versions/1/diff/",
        ],
        "post": [
            f"/catalog/sandboxes/{s}/build/",
            f"/catalog/sandboxes/{s}/secrets/",
            f"/catalog/sandboxes/{s}/edit/",
            f"/catalog/tools/{t}/edit/",
            f"/catalog/tools/{t}/delete/",
            f"/catalog/tools/{t}/versions/1/rollback/",
        ],
    }


def test_people_outside_the_team_get_404_everywhere(client, outsider, urls) -> None:
    client.force_login(outsider)
    for url in urls["get"]:
        assert client.get(url).status_code == 404, url
    for url in urls["post"]:
        assert client.post(url, {"name": "MAIL_API_TOKEN", "value": "x"}).status_code == 404, url
    assert not ImageBuild.objects.exists()


def test_members_see_every_page_of_their_team(client, member, urls) -> None:
    client.force_login(member)
    for url in urls["get"]:
        assert client.get(url).status_code == 200, url


def test_unknown_ids_are_404_not_500(client, member, ecommerce) -> None:
    client.force_login(member)
    for url in (
        "/catalog/sandboxes/999/",
        "/catalog/tools/999/",
        "/catalog/tools/1/versions/99/diff/",
    ):
        assert client.get(url).status_code == 404, url


def test_anonymous_visitors_are_sent_to_log_in(client, urls) -> None:
    for url in urls["get"]:
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/"), url


def test_the_catalog_lists_only_the_users_teams_tools(client, outsider, ecommerce) -> None:
    client.force_login(outsider)
    html = client.get("/catalog/").content.decode()
    assert "get_orders" not in html and "0 tools" in html


def test_someone_elses_build_log_is_not_found(client, outsider, ecommerce) -> None:
    build = image_build_start(sandbox=ecommerce, user=None, background=False)
    client.force_login(outsider)
    assert client.get(f"/catalog/sandboxes/{build.sandbox_id}/image/").status_code == 404
