"""Login throttling: django-axes locks a username out from one address after repeated failures."""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from axes.helpers import get_cool_off
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


class ThrottledLoginBackend(AxesStandaloneBackend):
    """Axes' check before every login through a page; programmatic logins pass through."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> None:
        # Every web login (the login page, the admin) hands Django its request; only code on the
        # server (tests' client.login, management commands) authenticates without one, and axes
        # would refuse those outright.
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)


def lockout_response(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """Render the login page again, saying the account is locked and for how long (429)."""
    cool_off = get_cool_off(request)
    minutes = max(1, round(cool_off.total_seconds() / 60)) if cool_off else None
    context = {
        "form": AuthenticationForm(request),
        "locked_out": True,
        "cooloff_minutes": minutes,
        "next": request.POST.get("next", "") if request.method == "POST" else "",
    }
    return render(request, "registration/login.html", context, status=429)
