"""The static files daphne serves itself, with the headers every other answer carries.

Django's `ASGIStaticFilesHandler` answers `/static/` outside the middleware stack: its files
and its 404 page (the site's own, quoting the path asked for) went out without the security
headers (no policy, framable, sniffable), and a path leading out of the static folders
(`/static/../settings.py`) raised through to daphne's bare 500, a traceback in the log per
try. Here such a path is a file that is not there, and every answer gets the headers from the
same middleware that sets them on pages (`SECURITY_HEADER_MIDDLEWARE`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.exceptions import SuspiciousFileOperation
from django.http import Http404, HttpRequest, HttpResponseBase
from django.utils.module_loading import import_string


@functools.cache
def _security_headers() -> Callable[[HttpRequest], HttpResponseBase]:
    """Return the security header middleware, made once, around the static answer of a request."""
    handler: Callable[[HttpRequest], HttpResponseBase] = _static_answer
    for path in reversed(settings.SECURITY_HEADER_MIDDLEWARE):
        handler = import_string(path)(handler)
    return handler


def _static_answer(request: HttpRequest) -> HttpResponseBase:
    return request.static_answer  # type: ignore[attr-defined, no-any-return]


def security_headers_set(request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
    """Return the response as the security header middleware leaves an answer."""
    request.static_answer = response  # type: ignore[attr-defined]
    return _security_headers()(request)


class StaticFilesHandler(ASGIStaticFilesHandler):
    """`ASGIStaticFilesHandler` whose answers carry the security headers, and whose paths
    out of the static folders are not found."""

    def serve(self, request: HttpRequest) -> HttpResponseBase:
        try:
            return super().serve(request)
        except SuspiciousFileOperation:
            # `..` past the static folders: no file of theirs, as Django says in development.
            raise Http404(f"{request.path} is no static file") from None

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        response = await super().get_response_async(request)
        return await sync_to_async(security_headers_set, thread_sensitive=False)(request, response)
