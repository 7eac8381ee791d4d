"""An agent's body with a typo, a key twice, a wrong type or a wrong media type is refused,
saying what is wrong, before anything is stored.

Read leniently, each ran something other than what was meant: `"lang": "bash"` ran a bash
script as Python (refused as a syntax error that never named the typo), a second `"sandbox"`
silently won, `"language": false` was Python, `"previous": 0` dropped the retry's link, and
text/plain or XML bodies were read as JSON.
"""

from __future__ import annotations

import json

import pytest

from jazzmine_web.reviews.models import Submission

pytestmark = pytest.mark.django_db

URL = "/api/v1/submissions/"


def post(api, body: str | dict, content_type: str = "application/json"):
    text = body if isinstance(body, str) else json.dumps(body)
    return api.post(URL, text, content_type=content_type)


def refused(response, status: int, code: str, *said: str) -> None:
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] == code, error
    for words in said:
        assert words in error["message"], error["message"]
    assert not Submission.objects.exists()


def fields(ecommerce, **more) -> dict:
    return {"sandbox": ecommerce.pk, "task": "t", "body": "echo hi", **more}


def test_an_unknown_field_is_named_with_the_fields_taken(api, ecommerce) -> None:
    refused(post(api, fields(ecommerce, lang="bash")), 400, "unknown_field", "'lang'", "'language'")


def test_a_key_given_twice_is_named(api, ecommerce) -> None:
    text = f'{{"sandbox": {ecommerce.pk}, "task": "t", "body": "echo hi", "sandbox": "other/x"}}'
    refused(post(api, text), 400, "invalid_json", "'sandbox' is given twice")


@pytest.mark.parametrize("language", [False, 0, "", {}, [], "Bash"], ids=repr)
def test_a_language_that_is_none_of_the_languages_is_refused(api, ecommerce, language) -> None:
    refused(post(api, fields(ecommerce, language=language)), 400, "invalid_field", "'language'")


@pytest.mark.parametrize("previous", [0, False, "", [], {}], ids=repr)
def test_a_previous_that_names_no_submission_is_refused(api, ecommerce, previous) -> None:
    response = post(api, fields(ecommerce, language="bash", previous=previous))
    assert response.status_code in (400, 404), response.content
    assert not Submission.objects.exists()


def test_previous_and_previous_id_together_are_refused(api, ecommerce) -> None:
    body = fields(ecommerce, language="bash", previous="a", previous_id="b")
    refused(post(api, body), 400, "invalid_field", "not both")


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/xml", "text/json", "application/octet-stream"]
)
def test_a_body_sent_as_anything_but_json_is_refused(api, ecommerce, content_type) -> None:
    body = fields(ecommerce, language="bash")
    refused(post(api, body, content_type), 415, "unsupported_media_type", content_type)


def test_a_body_that_says_another_charset_is_refused(api, ecommerce) -> None:
    body = fields(ecommerce, language="bash")
    response = post(api, body, "application/json; charset=latin-1")
    refused(response, 415, "unsupported_media_type", "UTF-8", "latin-1")


def test_json_by_any_of_its_names_and_in_utf_8_is_taken(api, ecommerce) -> None:
    for content_type in ("application/json; charset=utf-8", "application/vnd.api+json"):
        response = post(api, fields(ecommerce, language="bash"), content_type)
        assert response.status_code == 201, response.content


def test_null_is_a_field_not_given(api, ecommerce) -> None:
    response = post(api, fields(ecommerce, body="emit_result(1)", language=None, previous=None))
    assert response.status_code == 201, response.content
    assert response.json()["language"] == "python"
