"""Shared assets of every page."""

from __future__ import annotations

from urllib.parse import quote

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import DisallowedHost, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseNotFound
from django.template import loader
from django.views.decorators.cache import cache_control
from django.views.decorators.csrf import requires_csrf_token
from django.views.decorators.http import require_GET

from .highlighting import stylesheet
from .http import NotFound


@require_GET
@login_not_required
@cache_control(max_age=3600, public=True)
def pygments_css(request: HttpRequest) -> HttpResponse:
    """Serve the stylesheet for highlighted code."""
    return HttpResponse(stylesheet(), content_type="text/css")


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Answer 400, saying when it is the `Host` the request named that is not served here.

    Django's own page for it is the same as for a form it cannot parse: an operator who
    reached a new deployment by its address or another name read "send the form again".
    """
    host = None
    if isinstance(exception, DisallowedHost):
        # The raw header, shown escaped and cut short: `get_host()` refuses to read it.
        host = str(request.META.get("HTTP_HOST", ""))[:200]
    context = {"refused_host": host, "too_many": _too_many(exception)}
    body = loader.render_to_string("400.html", context, request)
    return HttpResponseBadRequest(body)


@requires_csrf_token  # as Django's own: the navigation's Log out form needs its token
def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Answer 404, saying what is missing when the view said it (`NotFound`).

    Django's own handler gives the page only the exception's text, which for most 404s is
    nothing a person should read ("No Tool matches the given query", a resolver's name): only
    a `NotFound`'s sentence, written for people, is shown; every other 404 reads as before.
    """
    missing = exception if isinstance(exception, NotFound) else None
    context = {
        "request_path": quote(request.path),
        "missing": missing.missing if missing else None,
        "back": missing.back if missing else None,
    }
    return HttpResponseNotFound(loader.render_to_string("404.html", context, request))


def _too_many(exception: Exception) -> str | None:
    """Say which of Django's counts a form went past ("files", "fields"), and the most taken.

    Its page said the form could not be parsed, as for a broken one: a person who picked 300
    files to import could not tell that fewer (or one zip) would go through.
    """
    if isinstance(exception, TooManyFilesSent):
        return f"more than {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files"
    if isinstance(exception, TooManyFieldsSent):
        return f"more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} fields"
    return None
