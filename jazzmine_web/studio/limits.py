"""Request size limits: every form, upload and API call is refused (413) above the limit.

Django's `DATA_UPLOAD_MAX_MEMORY_SIZE` covers form fields but not files, and under ASGI Django
reads the whole body before any middleware runs. A server can also read and spool a whole body
before it calls the app at all (daphne does), so the limit is enforced three times, outermost
first:

- `jazzmine_web.studio.server`, the web process (daphne with its own request class): where the
  socket is read. A declared `Content-Length` over the limit is answered before one byte of the
  body is read; a chunked body is cut off as soon as it passes the limit.
- `RequestSizeLimitASGI` wraps the ASGI app, for any other ASGI server: the same rule on the
  messages the server hands over (a server that buffers has read the body by then).
- `RequestSizeLimitMiddleware` is the same rule inside Django, for every other way in (WSGI,
  the test client).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from .refusals import RefusingMiddleware, is_api, refusal_response
from .untrusted import ascii_number

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def max_request_bytes() -> int:
    """Return the largest request body accepted (read per request, so tests can change it)."""
    return int(settings.JAZZMINE_MAX_UPLOAD_BYTES)


def too_large_message(limit: int) -> str:
    """Return the sentence a refused request gets."""
    return (
        f"The request is too large: this server accepts at most {_size(limit)} "
        f"({limit} bytes) per request. Send a smaller file or split the upload."
    )


def too_large_response(path: str, limit: int) -> HttpResponse:
    """Return the 413 answer: the API's JSON error shape under /api/, plain text elsewhere."""
    return refusal_response(path, status=413, code="too_large", message=too_large_message(limit))


def too_large_body(path: str, limit: int) -> tuple[bytes, bytes]:
    """Return the content type and body of the 413 answer, as `too_large_response` makes it."""
    if is_api(path):
        body = json.dumps({"error": {"code": "too_large", "message": too_large_message(limit)}})
        return b"application/json", body.encode()
    return b"text/plain; charset=utf-8", too_large_message(limit).encode()


class RequestSizeLimitMiddleware(RefusingMiddleware):
    """Refuse a request whose declared body is larger than the limit, before reading it."""

    def refusal(self, request: HttpRequest) -> HttpResponse | None:
        limit = max_request_bytes()
        declared = _content_length(request.META.get("CONTENT_LENGTH"))
        if declared is None:
            # An unreadable length is refused rather than guessed at.
            return too_large_response(request.path, limit)
        if declared > limit:
            return too_large_response(request.path, limit)
        return None


class RequestSizeLimitASGI:
    """Wrap an ASGI HTTP app so that oversized bodies are refused (413) before the app reads them.

    Unread only where the server hands the body over as it arrives: daphne has read it all by
    then, which is why the web process runs `jazzmine_web.studio.server` (the first layer).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = max_request_bytes()
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        declared = _content_length(headers.get(b"content-length", b"").decode("latin-1"))
        if declared is None or declared > limit:
            await _send_too_large(scope, send, limit)
            return
        if b"content-length" in headers:
            # The server frames the body by Content-Length, so no more than that can arrive.
            await self.app(scope, receive, send)
            return
        # No length declared (chunked): read and count up to the limit, then hand the app what
        # arrived. Only bodies within the limit are ever held.
        messages: list[Message] = []
        total = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            total += len(message.get("body", b""))
            if total > limit:
                await _send_too_large(scope, send, limit)
                return
            messages.append(message)
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


def _content_length(raw: str | None) -> int | None:
    """Return the declared length (0 when absent), or None when it is not a plain number."""
    if raw is None or raw == "":
        return 0
    return ascii_number(raw.strip())


async def _send_too_large(scope: Scope, send: Send, limit: int) -> None:
    content_type, data = too_large_body(scope.get("path", ""), limit)
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(data)).encode()),
                # The unread body is left behind, so the connection cannot be reused.
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


def _size(limit: int) -> str:
    for unit, factor in (("MB", 1024 * 1024), ("KB", 1024)):
        if limit >= factor:
            return f"{limit / factor:g} {unit}"
    return f"{limit} bytes"
