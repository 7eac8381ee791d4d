"""A submission names its sandbox by id in plain ASCII digits (or by 'team/name'): a reference
that str.isdigit() takes but is no short ASCII number ("²", "①", other scripts' digits, 5000
digits) names no sandbox, and is answered 404 in the API's JSON, never a 500."""

from __future__ import annotations

import json

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

ODD_DIGITS = ["²", "①", "١", "๑", "1" * 5000, "9" * 19]


def post(issued, sandbox) -> Client:
    api = Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}", raise_request_exception=False)
    body = json.dumps({"sandbox": sandbox, "task": "t", "body": "emit_result(1)"})
    return api.post("/api/v1/submissions/", body, content_type="application/json")


@pytest.mark.parametrize(
    "ref", ODD_DIGITS, ids=["superscript", "circled", "arabic", "thai", "5000", "19"]
)
def test_a_reference_in_odd_digits_names_no_sandbox(issued, ecommerce, ref) -> None:
    response = post(issued, ref)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "sandbox_not_found"


def test_its_id_in_ascii_digits_names_it(issued, ecommerce) -> None:
    response = post(issued, str(ecommerce.pk))
    assert response.status_code == 201, response.content
    assert response.json()["sandbox"]["id"] == ecommerce.pk
