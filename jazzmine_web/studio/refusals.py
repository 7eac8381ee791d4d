"""Requests answered before any view: the answer's shape, and the middleware that gives it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponse, JsonResponse


def is_api(path: str) -> bool:
    """Tell whether a path is the agents' API, whose every answer is JSON."""
    return path.startswith("/api/")


def refusal_response(path: str, *, status: int, code: str, message: str) -> HttpResponse:
    """Return a refusal: the API's JSON error shape under /api/, plain text elsewhere."""
    if is_api(path):
        return JsonResponse({"error": {"code": code, "message": message}}, status=status)
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")


class RefusingMiddleware:
    """A middleware that answers some requests itself, before any view, sync or async.

    Subclasses say which, and how, in `refusal`; every other request goes on unchanged.
    """

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        return self.refusal(request) or self.get_response(request)

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        return self.refusal(request) or await self.get_response(request)

    def refusal(self, request: HttpRequest) -> HttpResponse | None:
        """Return the answer that refuses this request, or None to let it through."""
        raise NotImplementedError
