from __future__ import annotations

import uuid

import pytest
from django.test import Client

from jazzmine_web.teams.services import api_token_create, api_token_revoke, team_create

from .conftest import submit

pytestmark = pytest.mark.django_db

ENDPOINTS = [
    ("post", "/api/v1/submissions/"),
    ("get", f"/api/v1/submissions/{uuid.uuid4()}/"),
    ("get", f"/api/v1/submissions/{uuid.uuid4()}/wait/?timeout=0"),
    ("get", f"/api/v1/submissions/{uuid.uuid4()}/events/"),
    ("get", "/api/v1/webhook/"),
]


@pytest.mark.parametrize(("method", "url"), ENDPOINTS)
def test_every_endpoint_wants_a_bearer_token(method, url) -> None:
    response = getattr(Client(), method)(url)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_session_cookie_does_not_open_the_api(logged_in, ecommerce) -> None:
    response = submit(logged_in, ecommerce)
    assert response.status_code == 401


def test_a_revoked_token_is_refused(member, ecommerce) -> None:
    issued = api_token_create(user=member, name="old")
    api_token_revoke(user=member, token_id=issued.token.pk)
    response = submit(Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}"), ecommerce)
    assert response.status_code == 401


def test_the_api_needs_no_csrf_token(issued, ecommerce) -> None:
    api = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Bearer {issued.raw}")
    assert submit(api, ecommerce).status_code == 201


def test_another_teams_sandbox_is_not_found(outsider, ecommerce) -> None:
    issued = api_token_create(user=outsider, name="stranger")
    response = submit(Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}"), ecommerce)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "sandbox_not_found"


def test_another_teams_submission_is_not_found(api, ecommerce, outsider) -> None:
    state = submit(api, ecommerce).json()
    team_create(name="Other", slug="other")
    stranger = Client(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=outsider, name='x').raw}")
    for path in ("", "wait/?timeout=0", "events/"):
        response = stranger.get(f"/api/v1/submissions/{state['id']}/{path}")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "submission_not_found"
