"""Sign-in for every page, and for a page's htmx request whose session has ended.

Django's `LoginRequiredMiddleware` answers a request without a session with a redirect to
the login page. A browser follows it for htmx too, which then swapped the whole login page
into the panel that asked (the token list, a review's decision panel) under a top bar still
naming the person. An htmx request gets `HX-Redirect` instead: the whole tab goes to the
login page, which brings the person back to the page they were on.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode, urlsplit

from django.contrib.auth import REDIRECT_FIELD_NAME
from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url


class StudioLoginRequired(LoginRequiredMiddleware):
    def handle_no_permission(self, request: HttpRequest, view_func: Any) -> HttpResponse:
        if request.headers.get("HX-Request") != "true":
            return super().handle_no_permission(request, view_func)
        login = resolve_url(self.get_login_url(view_func))
        query = urlencode({REDIRECT_FIELD_NAME: page_of(request)})
        # 200 with nothing to swap: htmx reads the header and sends the tab there.
        return HttpResponse(status=200, headers={"HX-Redirect": f"{login}?{query}"})


def page_of(request: HttpRequest) -> str:
    """Return the path of the page an htmx request came from (this host's), else "/"."""
    parts = urlsplit(request.headers.get("HX-Current-URL", ""))
    if parts.netloc and parts.netloc != request.get_host():
        return "/"
    path = parts.path
    if not path.startswith("/") or path.startswith("//") or "\\" in path:
        return "/"
    return f"{path}?{parts.query}" if parts.query else path
