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
    # Half of a UTF-16 pair, which json reads into a str that nothing can encode or store.
    "lone high surrogate": '{"%s": "\\ud800"}',
    "lone low surrogate inside text": '{"%s": "a\\udfffb"}',
    "a pair in the wrong order": '{"%s": "\\udc00\\ud83d"}',
    "lone surrogate deep in a field": '{"%s": [1, {"x": ["\\uDBFF"]}]}',
    "lone surrogate in a key": '{"%s": {"\\ud800": 1}}',
}


def assert_invalid_json(response) -> None:
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_json"
    assert "0000" not in error["message"]


# Readable, nested as deep as json reads: walked by the checks after it, never recursed into.
READABLE_DEEP = '{"%s": ' + "[" * 900 + "]" * 900 + "}"


@pytest.mark.parametrize("field", ["task", "body", "sandbox"])
def test_a_body_nested_as_deep_as_json_reads_is_refused_as_a_field(api, field: str) -> None:
    body = READABLE_DEEP.replace("%s", field)
    for _ in range(2):
        response = api.post("/api/v1/submissions/", body, content_type="application/json")
        assert response.status_code == 400, response.content[:300]
        assert response.json()["error"]["code"] != "server_error"
    assert not Submission.objects.exists()


def test_a_whole_pair_of_surrogates_is_one_character_and_taken(api, ecommerce) -> None:
    body = '{"sandbox": %d, "task": "smile \\ud83d\\ude00", "body": "emit_result(1)"}'
    response = api.post(
        "/api/v1/submissions/", body % ecommerce.pk, content_type="application/json"
    )
    assert response.status_code in (200, 201, 202), response.content[:300]
    assert Submission.objects.get().task == "smile \U0001f600"


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
