"""A path under /api/ that names no endpoint answers in the API's JSON shape, never a 500."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client

from jazzmine_web.teams.services import api_token_create

pytestmark = pytest.mark.django_db

ID = "6f1c2a3b-4d5e-4f60-8172-93a4b5c6d7e8"


@pytest.fixture
def api(user) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=user, name='t').raw}")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", f"/api/v1/submissions/{ID}/withdraw"),  # no final slash: was a server error
        ("post", f"/api/v1/submissions/{ID}/cancel"),
        ("post", "/api/v1/submissions"),
        ("get", "/api/v1/sandboxes"),
        ("post", f"/api/v1/submissions/{ID.upper()}/withdraw/"),
        ("post", f"/api/v1/submissions/{ID}/Withdraw/"),
        ("get", "/api/v2/submissions/"),
        ("delete", "/api/"),
    ],
)
def test_an_unknown_api_path_is_a_json_404(api, method, path) -> None:
    for client in (api, Client(enforce_csrf_checks=True)):
        response = getattr(client, method)(path)
        assert response.status_code == 404, path
        assert response["Content-Type"] == "application/json"
        error = response.json()["error"]
        assert error["code"] == "unknown_endpoint"
        assert "paths end with '/'" in error["message"]


def test_a_path_with_a_nul_is_refused_in_json_before_any_view(api) -> None:
    for client in (api, Client(enforce_csrf_checks=True)):
        response = client.post(f"/api/v1/submissions/{ID}/withdraw/%00")
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "invalid_field"


def test_the_endpoints_still_answer_and_other_pages_keep_their_404(api) -> None:
    assert api.get("/api/v1/sandboxes/").status_code == 200
    missing = api.post(f"/api/v1/submissions/{uuid.uuid4()}/withdraw/")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "submission_not_found"
    page = Client().get("/no-such-page/")
    assert page.status_code in (302, 404) and "json" not in page["Content-Type"]
