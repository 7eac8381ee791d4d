"""Home page and shared assets."""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

from .highlighting import stylesheet
from .selectors import team_sandbox_summaries


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """List the sandboxes of the user's teams, their tools and the XML prompt the LLM reads."""
    context = {"sandboxes": team_sandbox_summaries(request.user)}
    return render(request, "studio/home.html", context)


@require_GET
@login_not_required
@cache_control(max_age=3600, public=True)
def pygments_css(request: HttpRequest) -> HttpResponse:
    """Serve the stylesheet for highlighted code."""
    return HttpResponse(stylesheet(), content_type="text/css")
