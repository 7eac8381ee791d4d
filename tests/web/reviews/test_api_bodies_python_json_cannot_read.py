"""A JSON body that Python's json cannot read (a 5000-digit number, nesting 5000 deep) is a 400
`invalid_json`, never a 500, on every API call that reads one."""

from __future__ import annotations

import pytest

from jazzmine_web.reviews.models import Submission, WebhookEndpoint

pytestmark = pytest.mark.django_db

BIG = "1" + "0" * 5000
DEEP_ARRAY = "[" * 5000 + "]" * 5000
DEEP_OBJECT = '{"a":' * 5000 + "1" + "}" * 5000

# Each unreadable value, at the top of the body or inside a field.
BODIES = {
    "big integer field": '{"%s": ' + BIG + "}",
    "negative big integer field": '{"%s": -' + BIG + "}",
    "big integer deep in a field": '{"%s": [1, {"x": ' + BIG + "}]}",
    "array nesting": '{"%s": ' + DEEP_ARRAY + "}",
    "object nesting": '{"%s": ' + DEEP_OBJECT + "}",
    "whole body nested": DEEP_ARRAY,
}


def assert_invalid_json(response) -> None:
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_json"
    assert "0000" not in error["message"]


@pytest.mark.parametrize("case", BODIES)
def test_a_submission_answers_invalid_json(api, case: str) -> None:
    body = BODIES[case].replace("%s", "task")
    assert_invalid_json(api.post("/api/v1/submissions/", body, content_type="application/json"))
    assert not Submission.objects.exists()


@pytest.mark.parametrize("case", BODIES)
def test_setting_the_webhook_answers_invalid_json(api, case: str) -> None:
    body = BODIES[case].replace("%s", "url")
    assert_invalid_json(api.put("/api/v1/webhook/", body, content_type="application/json"))
    assert not WebhookEndpoint.objects.exists()
