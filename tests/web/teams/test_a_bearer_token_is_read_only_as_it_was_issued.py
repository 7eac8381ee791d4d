"""The API reads `Authorization: Bearer <token>` as RFC 6750 spells it, and nothing looser.

`str.strip()` once trimmed the token, and it trims far more than spaces: a token with a no-break
space or a Unicode separator before or after it still authenticated, so a header no person typed
(or one a proxy or a log had altered) spoke as the token's user.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.teams.services import api_token_create

pytestmark = pytest.mark.django_db

# Every character `str.strip()` drops that is not the ASCII space HTTP allows around a value.
STRIPPED_BY_PYTHON = [
    "\t",
    "\n",
    "\x0b",
    "\x0c",
    "\r",
    "\x1c",
    "\x1d",
    "\x1e",
    "\x1f",
    "\x85",
    "\xa0",
    "\u1680",
    "\u2000",
    "\u2007",
    "\u200a",
    "\u2028",
    "\u2029",
    "\u202f",
    "\u205f",
    "\u3000",
]


@pytest.mark.parametrize("extra", STRIPPED_BY_PYTHON, ids=lambda c: f"U+{ord(c):04X}")
@pytest.mark.parametrize("where", ["before", "after"])
def test_a_token_beside_a_character_no_one_typed_is_refused(issued_raw, extra, where) -> None:
    token = extra + issued_raw if where == "before" else issued_raw + extra
    assert whoami_status(f"Bearer {token}") == 401


@pytest.mark.parametrize(
    "header",
    [
        "Bearer {t}x",
        "Bearer {t}=x",
        "Bearer {t} {t}",
        "Bearer {t},",
        "Bearer\t{t}",
        "Bearer{t}",
        "Bearer: {t}",
        "Token {t}",
        "Basic {t}",
        "Bearer \u200b{t}",
        "Bear\u0435r {t}",  # a Cyrillic е
    ],
)
def test_a_header_spelled_otherwise_is_refused(issued_raw, header) -> None:
    assert whoami_status(header.format(t=issued_raw)) == 401


@pytest.mark.parametrize(
    "header", ["Bearer {t}", "bearer {t}", "BEARER  {t}", "Bearer {t} ", "bEaReR {t}  "]
)
def test_the_spellings_http_allows_are_read(issued_raw, header) -> None:
    assert whoami_status(header.format(t=issued_raw)) == 200


def test_a_client_with_no_header_is_refused() -> None:
    assert Client().get("/api/v1/webhook/").status_code == 401


@pytest.fixture
def issued_raw(member) -> str:
    return api_token_create(user=member, name="agent").raw


def whoami_status(header: str) -> int:
    """Ask the API, with this Authorization header, for the token's webhook settings."""
    return Client(HTTP_AUTHORIZATION=header).get("/api/v1/webhook/").status_code
