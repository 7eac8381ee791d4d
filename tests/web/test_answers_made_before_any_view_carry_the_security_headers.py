"""Answers made before any view (a refusal of a NUL character or an oversized body) and the
static files daphne serves itself carry the same browser security headers as every page.

Both were made outside the middleware that sets them: a refused NUL quoted the field's name,
which the request chose (`?<script>…=%00`), as text/plain without `nosniff` or a policy; a
missing static file was the site's HTML 404 page, quoting its path, framable and without a
policy; and a static path leading out of the static folders (`/static/../settings.py`) was
daphne's bare 500 with a traceback in the log, where it is a 404 like any missing file.
"""

from __future__ import annotations

from urllib.parse import unquote

import pytest
from asgiref.testing import ApplicationCommunicator
from django.test import Client

from jazzmine_web.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)

HEADERS = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
}


async def served(path: str, *, method: str = "GET", body: bytes = b"") -> tuple[int, dict, str]:
    """Return the status, headers and body of the real ASGI app's answer to a request."""
    headers = [(b"host", b"localhost")]
    if body:
        headers.append((b"content-type", b"application/x-www-form-urlencoded"))
        headers.append((b"content-length", str(len(body)).encode()))
    path, _, query = path.partition("?")
    scope = {
        "type": "http", "http_version": "1.1", "method": method, "scheme": "http",
        "path": unquote(path), "raw_path": path.encode(), "query_string": query.encode(),
        "headers": headers, "client": ("127.0.0.1", 50000), "server": ("localhost", 80),
    }  # fmt: skip
    communicator = ApplicationCommunicator(application, scope)
    await communicator.send_input({"type": "http.request", "body": body})
    start = await communicator.receive_output(timeout=10)
    chunks = []
    while True:  # a file is sent in parts
        message = await communicator.receive_output(timeout=10)
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    await communicator.wait(timeout=10)
    found = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    return start["status"], found, b"".join(chunks).decode(errors="replace")


def assert_headed(headers: dict[str, str]) -> None:
    for name, value in HEADERS.items():
        assert headers.get(name) == value, (name, headers)
    policy = headers.get("content-security-policy", "")
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy, headers


async def test_a_refused_nul_quoting_the_requests_own_text_has_them() -> None:
    status, headers, body = await served("/login/?%3Cscript%3Ealert(1)%3C/script%3E=%00")
    assert status == 400
    assert "'<script>alert(1)</script>' contains a NUL character" in body
    assert headers["content-type"].startswith("text/plain")
    assert_headed(headers)


async def test_a_refused_nul_in_a_form_has_them() -> None:
    status, headers, _body = await served("/login/", method="POST", body=b"username=a%00")
    assert status == 400
    assert_headed(headers)


def test_a_refused_oversized_body_has_them(settings) -> None:
    settings.JAZZMINE_MAX_UPLOAD_BYTES = 100
    response = Client().post("/login/", {"username": "x" * 200})
    assert response.status_code == 413
    assert_headed({k.lower(): v for k, v in response.headers.items()})


async def test_a_missing_static_file_is_the_404_page_with_them() -> None:
    status, headers, body = await served("/static/studio/%3Cb%3Enone.js")
    assert status == 404
    assert "Nothing is at" in body
    assert_headed(headers)


async def test_a_static_file_has_them() -> None:
    status, headers, _body = await served("/static/studio/page.js")
    assert status == 200
    assert_headed(headers)


@pytest.mark.parametrize(
    "path", ["/static/../settings.py", "/static/..%2f..%2fjazzmine_web/settings.py"]
)
async def test_a_static_path_out_of_the_static_folders_is_not_found(path) -> None:
    status, headers, body = await served(path)
    assert status == 404, (status, body[:200])
    assert "SECRET_KEY" not in body
    assert_headed(headers)
