"""Shared assets of every page."""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

from .highlighting import stylesheet


@require_GET
@login_not_required
@cache_control(max_age=3600, public=True)
def pygments_css(request: HttpRequest) -> HttpResponse:
    """Serve the stylesheet for highlighted code."""
    return HttpResponse(stylesheet(), content_type="text/css")
