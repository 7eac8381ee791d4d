"""A NUL character (\\u0000) in any field of an API body is refused as the API refuses any bad
field (400, `invalid_field`, the field named), before anything is looked up or stored.

PostgreSQL can neither store text with a NUL nor look it up (psycopg refuses it as a query's
parameter): there each of these was a 500 with an HTML page. The answer is the same on SQLite.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client

from jazzmine_web.reviews.models import Submission, WebhookEndpoint

from .conftest import BODY, set_policy

pytestmark = pytest.mark.django_db


def _api(issued) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}", raise_request_exception=False)


def _post(api: Client, path: str, payload: dict):
    return api.post(path, json.dumps(payload), content_type="application/json")


def _refused(response, field: str) -> bool:
    assert response.status_code == 400, (response.status_code, response.content[:300])
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == "invalid_field"
    assert f"'{field}' contains a NUL character" in error["message"]
    return True


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"sandbox": "shop/eco\u0000mmerce"}, "sandbox"),
        ({"sandbox": "eco\u0000"}, "sandbox"),
        ({"sandbox": "\u0000"}, "sandbox"),
        ({"task": "total\u0000"}, "task"),
        ({"prompt": "p\u0000"}, "prompt"),
        ({"body": BODY + "\u0000"}, "body"),
        ({"language": "python\u0000"}, "language"),
        ({"previous": "\u0000"}, "previous"),
        ({"meta": {"note\u0000": 1}}, "meta.note\\u0000"),
    ],
    ids=["team-name-ref", "name-ref", "nul-ref", "task", "prompt", "body", "language",
         "previous", "key"],
)  # fmt: skip
def test_a_nul_in_a_submission_is_refused(issued, ecommerce, fields, named) -> None:
    payload = {"sandbox": ecommerce.pk, "task": "t", "body": BODY, **fields}
    assert _refused(_post(_api(issued), "/api/v1/submissions/", payload), named)
    assert not Submission.objects.exists()


@pytest.mark.parametrize("reason", ["bye\u0000", "\u0000"])
def test_a_nul_in_a_withdraw_reason_is_refused(issued, ecommerce, reason) -> None:
    set_policy(ecommerce)
    api = _api(issued)
    state = _post(api, "/api/v1/submissions/", {"sandbox": ecommerce.pk, "task": "t", "body": BODY})
    assert state.status_code == 201
    submission_id = state.json()["id"]
    response = _post(api, f"/api/v1/submissions/{submission_id}/withdraw/", {"reason": reason})
    assert _refused(response, "reason")
    assert Submission.objects.get(pk=submission_id).status == "pending"  # nothing was lost


@pytest.mark.parametrize("url", ["https://example.com/\u0000", "https://exa\u0000mple.com/"])
def test_a_nul_in_a_webhook_url_is_refused(issued, url) -> None:
    assert _refused(_post(_api(issued), "/api/v1/webhook/", {"url": url}), "url")
    assert not WebhookEndpoint.objects.exists()


def test_a_nul_in_an_api_query_is_refused(issued, ecommerce) -> None:
    response = _api(issued).get("/api/v1/sandboxes/?team=sh%00op")
    assert _refused(response, "team")
