"""A malformed multipart body gets the answer its path gives, never Twisted's bare 400.

Twisted's request parsed every POSTed form body itself as it ended, for `request.args`, which
daphne never reads: a multipart body its parser could not take (no boundary, a boundary the
body never uses, a body cut short) got `HTTP/1.1 400 Bad Request` with no body and a closed
connection, before the app ever saw it. An agent got no JSON to read, a browser an empty page.
The web process leaves the body to Django now: the API answers in its JSON error shape (any
form, malformed or not, is a 415 that says to send JSON) and stores nothing; a page gets Django's own 400 page, or
the CSRF 403 when the body parses to nothing. These tests talk to the web process as the
Procfile starts it, with bodies Twisted's parser refused.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from jazzmine_web.reviews.models import Submission
from jazzmine_web.teams.services import api_token_create
from tests.web.reviews.conftest import BODY, set_policy
from tests.workers import web_on_test_database

pytestmark = pytest.mark.django_db(transaction=True)

PART = b'--BoUnDaRy\r\nContent-Disposition: form-data; name="data"\r\n\r\n{"task": "t"}\r\n'
WELL_FORMED = PART + b"--BoUnDaRy--\r\n"

# All but one refused by Twisted's parser (checked in the last test); Django reads them its own
# way.
MALFORMED = {
    "no boundary": (b"multipart/form-data", WELL_FORMED),
    "an empty boundary": (b"multipart/form-data; boundary=", WELL_FORMED),
    "garbage": (b"multipart/form-data; boundary=BoUnDaRy", b"this is not a multipart body"),
    # Boundaries are case-sensitive: the body's is not the one declared.
    "boundary in capitals": (
        b"MULTIPART/FORM-DATA; boundary=BoUnDaRy",
        WELL_FORMED.replace(b"BoUnDaRy", b"BOUNDARY"),
    ),
    "truncated": (b"multipart/form-data; boundary=BoUnDaRy", PART[:7]),
    # Twisted took this one (the email parser notes the missing end and goes on): so does Django.
    "truncated within a part": (b"multipart/form-data; boundary=BoUnDaRy", PART[:-6]),
    "an unterminated boundary": (b'multipart/form-data; boundary="BoUnDaRy', WELL_FORMED),
}


@pytest.fixture(scope="module")
def web(django_db_setup, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The web process as the Procfile starts it, on the test database; yield its URL."""
    with web_on_test_database(tmp_path_factory.mktemp("web-log")) as web:
        yield web.url


def _not_twisteds(response: httpx.Response) -> None:
    """Fail on Twisted's bare answer: no headers, no body, the connection closed."""
    assert response.content, f"a bare {response.status_code} with no body: Twisted's answer"
    assert "content-type" in response.headers, response.headers


@pytest.mark.parametrize("malformed", MALFORMED)
def test_the_api_answers_in_json_and_stores_nothing(web: str, member, ecommerce, malformed):
    set_policy(ecommerce)  # a submission waits for review: nothing runs
    token = api_token_create(user=member, name="ci-bot").raw
    content_type, body = MALFORMED[malformed]
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=web, headers=headers, timeout=10) as api:
        for _ in range(2):  # the server is no worse for the first
            response = api.post(
                "/api/v1/submissions/", content=body, headers={"Content-Type": content_type}
            )
            _not_twisteds(response)
            assert response.headers["content-type"] == "application/json", response.text
            # The API refuses a form's type before it reads the body, however malformed.
            assert response.status_code == 415, response.text
            error = response.json()["error"]
            assert set(error) == {"code", "message"}, error
            assert error["code"] == "unsupported_media_type"
            assert "Content-Type: application/json" in error["message"]
        assert not Submission.objects.exists()
        # The same agent, sending JSON as it should, is taken.
        fields = {"sandbox": ecommerce.pk, "task": "Total of delivered orders", "body": BODY}
        sent = api.post("/api/v1/submissions/", json=fields)
    assert sent.status_code == 201, sent.text
    assert Submission.objects.get().task == "Total of delivered orders"


@pytest.mark.parametrize("malformed", MALFORMED)
def test_a_page_answers_with_djangos_own_refusal(web: str, malformed):
    content_type, body = MALFORMED[malformed]
    with httpx.Client(base_url=web, timeout=10) as browser:
        for _ in range(2):
            response = browser.post("/login/", content=body, headers={"Content-Type": content_type})
            _not_twisteds(response)
            # Django's 400 when its parser refuses the body, its CSRF 403 when the body parses
            # to no fields (no token among them): either a page that says what happened.
            assert response.status_code in (400, 403), response.text[:500]
            assert response.headers["content-type"].startswith("text/html"), response.headers
            if response.status_code == 400:
                # The site's own page, saying what went wrong and that nothing was stored.
                assert "could not read this request" in response.text, response.text
                assert "Nothing was stored" in response.text
            else:
                assert "CSRF" in response.text, response.text
        assert browser.get("/login/").status_code == 200


def test_twisted_would_have_refused_each_body_itself() -> None:
    """The bodies above are the ones Twisted's own form parser answered with a bare 400."""
    from twisted.web.http import _getMultiPartArgs, _MultiPartParseException

    for name, (content_type, body) in MALFORMED.items():
        if name == "truncated within a part":
            continue
        with pytest.raises(_MultiPartParseException):
            _getMultiPartArgs(body, content_type)
