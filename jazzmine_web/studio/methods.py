"""A request with a method its address does not take gets an answer that says which it takes.

Django's own answer is an empty 405: an agent calling the API with the wrong verb got an empty
`text/html` body where every other API answer is JSON, and a person who pressed Enter in the
address bar of a page a form had posted to (a refused form is shown at the address it was
posted to) got the browser's blank error page, with no way back.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponseBase
from django.shortcuts import render
from django.utils.deprecation import MiddlewareMixin

from .refusals import is_api, refusal_response


def _allowed(response: HttpResponseBase) -> list[str]:
    return [m.strip() for m in response.get("Allow", "").split(",") if m.strip()]


def method_refusal_message(method: str, path: str, allowed: list[str]) -> str:
    """Return the sentence an API client gets for a method its endpoint does not take."""
    if not allowed:
        takes = "another method"
    else:
        takes = allowed[0] if len(allowed) == 1 else f"{', '.join(allowed[:-1])} or {allowed[-1]}"
    return f"{method} is not allowed at {path}: this endpoint takes {takes}."


class MethodNotAllowedMiddleware(MiddlewareMixin):
    """Replace an empty 405 with the API's JSON error under /api/, and a page elsewhere.

    A view that wrote its own 405 (a body) keeps it; the `Allow` header always stays.
    """

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if response.status_code != 405 or getattr(response, "streaming", False):
            return response
        if getattr(response, "content", b""):
            return response
        allowed = _allowed(response)
        method = (request.method or "").upper()
        if is_api(request.path):
            answer = refusal_response(
                request.path,
                status=405,
                code="method_not_allowed",
                message=method_refusal_message(method, request.path, allowed),
            )
        else:
            answer = render(
                request,
                "405.html",
                {"request_path": request.path, "method": method, "allowed": allowed},
                status=405,
            )
        if allowed:
            answer["Allow"] = ", ".join(allowed)
        return answer
