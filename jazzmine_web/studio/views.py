"""Home page and shared assets."""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

from .highlighting import stylesheet
from .selectors import demo_registry, sandbox_summaries


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """List the sandboxes and tools with the XML prompt the LLM reads."""
    return render(request, "studio/home.html", {"sandboxes": sandbox_summaries(demo_registry())})


@require_GET
@login_not_required
@cache_control(max_age=3600, public=True)
def pygments_css(request: HttpRequest) -> HttpResponse:
    """Serve the stylesheet for highlighted code."""
    return HttpResponse(stylesheet(), content_type="text/css")
