"""A Content-Length written with Unicode digits ("²", latin-1 in a header) is refused as 413.

str.isdigit accepts "²" while int() refuses it: the size check used to raise ValueError (500).
So did a length of more digits than int() reads (4300), and is refused the same.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.teams.services import api_token_create

from .test_request_size_limit import call_asgi

pytestmark = pytest.mark.django_db(transaction=True)

UNICODE_DIGITS = ["²", "¹²", "1³", "²²²", " ¹ ", "1" * 5000]


@pytest.mark.parametrize("length", UNICODE_DIGITS)
async def test_the_asgi_layer_refuses_it_unread(length: str) -> None:
    status, body, read = await call_asgi(
        [(b"content-length", length.encode("latin-1")), (b"content-type", b"application/json")],
        iter([(b"{}", False)]),
    )
    assert status == 413 and read == 0
    assert b"too_large" in body


@pytest.mark.parametrize("length", UNICODE_DIGITS)
def test_the_django_middleware_refuses_it(user, length: str) -> None:
    issued = api_token_create(user=user, name="bot")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}", raise_request_exception=False)
    response = api.post(
        "/api/v1/submissions/", "{}", content_type="application/json", CONTENT_LENGTH=length
    )
    assert response.status_code == 413
