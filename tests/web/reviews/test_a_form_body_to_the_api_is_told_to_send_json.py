"""A body sent to the API as a form (what `curl -d` sends unless told otherwise) is a 415 that
says to send JSON, on every call that reads a body, never a 500; nothing is stored."""

from __future__ import annotations

import json

import pytest

from jazzmine_web.reviews.models import Submission, WebhookEndpoint
from tests.web.reviews.conftest import set_policy, submit

pytestmark = pytest.mark.django_db

FORMS = {
    "urlencoded": "application/x-www-form-urlencoded",
    "urlencoded with a charset": "application/x-www-form-urlencoded; charset=utf-8",
    "multipart": "multipart/form-data; boundary=BoUnDaRy",
    "capitals": "Application/X-WWW-Form-Urlencoded",
    "multipart in capitals": "MULTIPART/FORM-DATA; boundary=BoUnDaRy",
}


def _body(content_type: str, fields: dict[str, object]) -> str:
    text = json.dumps(fields)  # JSON, as the caller meant it, under a form's type
    if content_type.lower().startswith("multipart"):
        return (
            '--BoUnDaRy\r\nContent-Disposition: form-data; name="data"\r\n\r\n'
            f"{text}\r\n--BoUnDaRy--\r\n"
        )
    return text


def assert_told_to_send_json(response, content_type: str) -> None:
    assert response.status_code == 415, response.content
    error = response.json()["error"]
    assert error["code"] == "unsupported_media_type"
    assert "Content-Type: application/json" in error["message"]
    assert content_type.split(";")[0].lower() in error["message"]


@pytest.mark.parametrize("form", FORMS)
def test_a_submission_sent_as_a_form(api, ecommerce, form: str) -> None:
    fields = {"sandbox": ecommerce.pk, "task": "t", "body": "emit_result(1)"}
    response = api.post(
        "/api/v1/submissions/", _body(FORMS[form], fields), content_type=FORMS[form]
    )
    assert_told_to_send_json(response, FORMS[form])
    assert not Submission.objects.exists()
    # The same body with the right type is taken.
    sent = api.post("/api/v1/submissions/", json.dumps(fields), content_type="application/json")
    assert sent.status_code == 201, sent.content


@pytest.mark.parametrize("form", FORMS)
def test_a_withdrawal_and_a_webhook_sent_as_forms(api, ecommerce, form: str) -> None:
    set_policy(ecommerce)
    pending = submit(api, ecommerce).json()
    assert pending["status"] == "pending"
    content_type = FORMS[form]
    body = _body(content_type, {"url": "https://example.com/hook", "reason": "x"})
    withdraw = f"/api/v1/submissions/{pending['id']}/withdraw/"
    assert_told_to_send_json(api.post(withdraw, body, content_type=content_type), content_type)
    assert Submission.objects.get(pk=pending["id"]).status == "pending"
    assert_told_to_send_json(
        api.put("/api/v1/webhook/", body, content_type=content_type), content_type
    )
    assert not WebhookEndpoint.objects.exists()
