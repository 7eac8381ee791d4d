"""Checks that text from outside (an API body, a form, a socket's message) meets before use.

One rule each, shared by every way in, so that the API, the pages and the sockets refuse the
same input with the same reason.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from channels.security.websocket import WebsocketDenier
from django.http import HttpRequest, HttpResponse
from django.http.cookie import parse_cookie

from jazzmine.jsontext import JSONTextError, json_read, surrogate_where, text_where

from .refusals import RefusingMiddleware, is_api, refusal_response

# Longer than any id or size this app counts (a 64-bit integer has 19 digits); a longer run of
# digits is no number it could mean, and int() refuses over 4300 digits anyway.
MAX_NUMBER_DIGITS = 18
NUL = "\x00"
# Deeper than any message a page sends; walking or printing a value nested past Python's
# recursion limit raises RecursionError wherever it happens.
MAX_MESSAGE_DEPTH = 32


def ascii_number(raw: str) -> int | None:
    """Return the number a short run of ASCII digits spells, or None for anything else.

    str.isdigit alone accepts "²", "①" and other scripts' digits, which int() then refuses or
    reads as some other number; a sign, spaces or underscores are no part of an id either.
    """
    if raw.isascii() and raw.isdigit() and len(raw) <= MAX_NUMBER_DIGITS:
        return int(raw)
    return None


def id_number(value: Any) -> int | None:
    """Return the id (or count) a query, form or JSON value names, or None if it names none.

    What a database column can hold only: Django bounds an out-of-range number in a lookup
    on a model's own integer field, but not through a foreign key (`sandbox_id=10**20` raises
    OverflowError on SQLite, "integer out of range" on PostgreSQL: a 500 either way).
    """
    if isinstance(value, bool):
        return None  # JSON's true is no id, though Python counts it as 1
    if isinstance(value, int):
        return value if 0 <= value < 10**MAX_NUMBER_DIGITS else None
    if isinstance(value, str):
        return ascii_number(value)
    return None


def uuid_text(value: Any) -> str | None:
    """Return the UUID a query, form or JSON value names (as Django writes one), or None.

    A lookup on a UUID column raises ValidationError for text that is no UUID, and reads a
    number as one (UUID(int=...)): only text is an id here.
    """
    if not isinstance(value, str):
        return None
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return None


def nul_field(value: Any) -> str | None:
    """Return where a NUL character is in a JSON-like value ('task', 'tools[2]'), or None.

    PostgreSQL cannot store NUL in text (psycopg refuses it even as a query's parameter), and
    no script, name or sentence needs one: text that has one is refused, never cut.
    """
    where = text_where(value, lambda text: NUL in text)
    return None if where is None else where or "the text"


def nul_message(field: str) -> str:
    """Return the sentence a refused NUL character gets."""
    return (
        f"'{field}' contains a NUL character (\\u0000), which text here cannot hold; "
        "remove it and send again."
    )


def unkeepable_problem(value: Any) -> str | None:
    """Return why a JSON-like value holds text nothing here can keep, or None.

    A NUL character (no PostgreSQL text holds one), or half of a UTF-16 surrogate pair, which
    Python keeps in a str (a literal's escape, `"\\ud800"`, makes one) but UTF-8 cannot
    encode: neither database stores it, and no page could show it.
    """
    field = nul_field(value)
    if field is not None:
        return nul_message(field)
    where = surrogate_where(value)
    if where is not None:
        return (
            f"'{where or 'the text'}' contains half of a UTF-16 surrogate pair (an escape from "
            "\\ud800 to \\udfff without its other half), which is no character; write whole "
            "characters."
        )
    return None


class MessageRefused(ValueError):
    """A websocket frame that holds no message a socket can read; says why, quoting nothing."""


def socket_message(text: str | None) -> dict[str, Any]:
    """Return the JSON object a websocket's text frame holds; raise MessageRefused if none.

    Channels' JSON consumer raises on a binary or empty frame and on text `json` cannot read,
    which ends the socket (1011) with a traceback. The object is checked whole before any
    handler reads it: text with a NUL or a lone surrogate could be neither stored nor looked up.
    """
    if text is None:
        raise MessageRefused("messages are JSON objects sent as text: this frame was binary")
    if not text:
        raise MessageRefused("the message is empty: messages are JSON objects")
    try:
        content = json_read(text)
    except JSONTextError as exc:
        raise MessageRefused(f"the message is not readable: {exc}") from None
    if not isinstance(content, dict):
        raise MessageRefused("messages must be JSON objects")
    if _depth(content) > MAX_MESSAGE_DEPTH:
        raise MessageRefused(f"the message nests deeper than {MAX_MESSAGE_DEPTH} levels")
    field = nul_field(content)
    if field is not None:
        raise MessageRefused(nul_message(field))
    return content


def _depth(value: Any) -> int:
    """Return how many levels of objects and lists a JSON value has, without recursing."""
    depth, level = 0, [value]
    while True:
        nodes = [node for node in level if isinstance(node, dict | list)]
        if not nodes:
            return depth
        depth += 1
        level = [
            item for node in nodes for item in (node.values() if isinstance(node, dict) else node)
        ]


FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def nul_header(headers: Iterable[tuple[str, str]]) -> str | None:
    """Return which header or cookie holds a NUL character ('the sessionid cookie'), or None.

    Headers are stored (a submission's User-Agent, django-axes' log of logins) and cookies
    looked up (the session's key). The web process's HTTP parser refuses a NUL byte in a
    header (Twisted answers 400, as RFC 9110 section 5.5 allows), but not a cookie quoted
    `"a\\000b"`, which Django unquotes the way Python's `http.cookies` does: to a NUL.
    """
    for name, value in headers:
        if NUL in name or NUL in value:
            named = name.replace(NUL, "\\u0000")
            return f"the {named} header"
        if name.lower() == "cookie":
            for key, item in parse_cookie(value).items():
                if NUL in key or NUL in item:
                    named = key.replace(NUL, "\\u0000")
                    return f"the {named} cookie"
    return None


def nul_in_request(request: HttpRequest) -> str | None:
    """Return the name of a query or form field, header (or the path) holding a NUL character."""
    if NUL in request.path:
        return "the path"
    header = nul_header(request.headers.items())
    if header is not None:
        return header
    params = [request.GET]
    # Form bodies only, and never the API's: an API body is JSON, which the API reads and
    # checks itself (a form sent there is refused as one), and reading POST would consume the
    # body the view still has to read.
    if request.method == "POST" and request.content_type in FORM_TYPES and not is_api(request.path):
        params.append(request.POST)
    for query in params:
        for key, values in query.lists():
            found = nul_field({key: values})
            if found is not None:
                return found.split("[", 1)[0]
    return None


def nul_refusal(path: str, field: str) -> HttpResponse:
    """Return the 400 answer: the API's JSON error shape under /api/, plain text elsewhere."""
    return refusal_response(path, status=400, code="invalid_field", message=nul_message(field))


class NulRefusalMiddleware(RefusingMiddleware):
    """Refuse (400) a request whose path, headers, cookies, query or form fields hold a NUL.

    Django's form fields refuse NUL already, but pages also read filters and a few fields
    without a form, and any of those reaching PostgreSQL (a filter, a row) was a 500.
    """

    def refusal(self, request: HttpRequest) -> HttpResponse | None:
        field = nul_in_request(request)
        return nul_refusal(request.path, field) if field is not None else None


class WebsocketNulRefusal:
    """ASGI middleware: refuse a websocket handshake with a NUL character in a header or cookie.

    Before anything reads them: the session cookie is looked up to find the user.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket":
            pairs = scope.get("headers", [])
            headers = ((k.decode("latin-1"), v.decode("latin-1")) for k, v in pairs)
            if nul_header(headers) is not None:
                return await WebsocketDenier.as_asgi()(scope, receive, send)
        return await self.app(scope, receive, send)
