from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from jazzmine_web.catalog.services import registry_for_sandbox
from jazzmine_web.teams.services import api_token_create, api_token_revoke

pytestmark = pytest.mark.django_db


@pytest.fixture
def bearer(member):
    return {"HTTP_AUTHORIZATION": f"Bearer {api_token_create(user=member, name='agent').raw}"}


def test_it_lists_the_sandboxes_of_the_token_owners_teams(client, bearer, ecommerce) -> None:
    body = client.get("/api/v1/sandboxes/", **bearer).json()
    assert [(s["team"], s["name"], s["id"]) for s in body["sandboxes"]] == [
        ("shop", "ecommerce", ecommerce.pk)
    ]


def test_it_lists_a_sandboxs_tools_with_their_interface(client, bearer, ecommerce) -> None:
    body = client.get(f"/api/v1/sandboxes/{ecommerce.pk}/tools/", **bearer).json()
    tools = {t["name"]: t for t in body["tools"]}
    assert sorted(tools) == [
        "get_orders",
        "get_user",
        "search_products",
        "send_receipt",
        "update_order_status",
    ]
    assert tools["send_receipt"]["secrets"] == ["MAIL_API_TOKEN"]
    assert tools["search_products"]["is_async"] is True
    assert tools["get_user"]["parameters"][0]["display_name"] == "Customer"
    assert body["checksum"] == registry_for_sandbox(ecommerce).sandbox_checksum("ecommerce")


def test_it_returns_the_exact_prompt_and_checksum(client, bearer, ecommerce) -> None:
    body = client.get(f"/api/v1/sandboxes/{ecommerce.pk}/prompt/", **bearer).json()
    registry = registry_for_sandbox(ecommerce)
    assert body["prompt"] == registry.build_tools_prompt("ecommerce")
    assert body["checksum"] == registry.sandbox_checksum("ecommerce")
    assert len(ET.fromstring(body["prompt"]).findall("tool")) == 5


def test_it_answers_401_json_without_a_valid_token(client, ecommerce, member) -> None:
    for headers in (
        {},
        {"HTTP_AUTHORIZATION": "Bearer jzm_wrong"},
        {"HTTP_AUTHORIZATION": "Basic x"},
    ):
        response = client.get("/api/v1/sandboxes/", **headers)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "unauthorized"
        assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_revoked_token_stops_working(client, member, ecommerce) -> None:
    issued = api_token_create(user=member, name="agent")
    headers = {"HTTP_AUTHORIZATION": f"Bearer {issued.raw}"}
    assert client.get("/api/v1/sandboxes/", **headers).status_code == 200
    api_token_revoke(user=member, token_id=issued.token.pk)
    assert client.get("/api/v1/sandboxes/", **headers).status_code == 401


def test_an_unknown_or_foreign_sandbox_is_404_json(client, ecommerce, outsider) -> None:
    headers = {"HTTP_AUTHORIZATION": f"Bearer {api_token_create(user=outsider, name='a').raw}"}
    for url in (f"/api/v1/sandboxes/{ecommerce.pk}/tools/", "/api/v1/sandboxes/999/prompt/"):
        response = client.get(url, **headers)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "sandbox_not_found"


def test_the_api_needs_no_session_and_no_csrf(client, bearer, ecommerce) -> None:
    client.logout()
    response = client.get(f"/api/v1/sandboxes/{ecommerce.pk}/prompt/", **bearer)
    assert response.status_code == 200
    assert client.post("/api/v1/sandboxes/", **bearer).status_code == 405
