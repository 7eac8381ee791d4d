"""Every form, upload and API call is refused (413) above JAZZMINE_MAX_UPLOAD_BYTES, unread."""

from __future__ import annotations

import asyncio
import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from jazzmine_web.asgi import application
from jazzmine_web.teams.services import api_token_create

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 4096
FORTY_MB = 40 * 1024 * 1024


@pytest.fixture(autouse=True)
def small_limit(settings):
    settings.JAZZMINE_MAX_UPLOAD_BYTES = LIMIT


def test_the_catalog_import_form_refuses_an_oversized_upload(logged_in) -> None:
    big = SimpleUploadedFile("tools.py", b"#" * (LIMIT * 2), content_type="text/x-python")
    response = logged_in.post("/catalog/import/", {"files": [big]})
    assert response.status_code == 413
    assert "too large" in response.content.decode()


def test_the_script_tool_zip_import_refuses_an_oversized_archive(logged_in) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr("tool/script.py", b"x" * (LIMIT * 2))
    upload = SimpleUploadedFile("tools.zip", buffer.getvalue(), content_type="application/zip")
    response = logged_in.post("/catalog/script-tools/import/", {"archive": upload})
    assert response.status_code == 413


def test_the_api_refuses_an_oversized_body_with_its_json_error(user) -> None:
    issued = api_token_create(user=user, name="bot")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}")
    body = '{"sandbox": 1, "task": "t", "body": "' + "x" * LIMIT + '"}'
    response = api.post("/api/v1/submissions/", body, content_type="application/json")
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["code"] == "too_large" and str(LIMIT) in error["message"]


def test_a_body_within_the_limit_goes_through(user) -> None:
    issued = api_token_create(user=user, name="bot")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}")
    response = api.post("/api/v1/submissions/", {"task": "t"}, content_type="application/json")
    assert response.status_code != 413


async def call_asgi(headers: list[tuple[bytes, bytes]], chunks) -> tuple[int, bytes, int]:
    """Drive the real ASGI app; return the status, the body and how many body bytes it read."""
    read = 0
    sent: list[dict] = []
    source = iter(chunks)

    async def receive() -> dict:
        nonlocal read
        try:
            chunk, more = next(source)
        except StopIteration:
            await asyncio.sleep(3600)
        read += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": more}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/v1/submissions/",
        "raw_path": b"/api/v1/submissions/",
        "query_string": b"",
        "headers": [(b"host", b"localhost"), *headers],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    await asyncio.wait_for(application(scope, receive, send), timeout=30)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body, read


def forty_megabytes_in_chunks():
    chunk = b"x" * 65536
    for i in range(FORTY_MB // len(chunk)):
        yield chunk, i < FORTY_MB // len(chunk) - 1


async def test_a_40_mb_upload_with_its_length_declared_is_refused_without_reading_it() -> None:
    status, body, read = await call_asgi(
        [(b"content-length", str(FORTY_MB).encode()), (b"content-type", b"application/json")],
        forty_megabytes_in_chunks(),
    )
    assert status == 413
    assert b"too_large" in body
    assert read == 0


async def test_a_chunked_40_mb_upload_is_refused_once_it_passes_the_limit() -> None:
    status, _body, read = await call_asgi(
        [(b"transfer-encoding", b"chunked"), (b"content-type", b"application/json")],
        forty_megabytes_in_chunks(),
    )
    assert status == 413
    assert read <= LIMIT + 65536  # at most the limit and the chunk that passed it


async def test_a_small_chunked_body_still_reaches_the_app() -> None:
    status, body, _read = await call_asgi(
        [(b"transfer-encoding", b"chunked"), (b"content-type", b"application/json")],
        iter([(b'{"task":', True), (b' "t"}', False)]),
    )
    assert status == 401  # the API answered: no token, but the body was handed over whole
    assert b"unauthorized" in body


async def test_a_non_numeric_content_length_is_refused() -> None:
    status, _body, read = await call_asgi(
        [(b"content-length", b"12abc")], iter([(b"x" * 12, False)])
    )
    assert status == 413 and read == 0
