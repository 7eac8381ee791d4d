"""Login throttling: django-axes locks a username out from one address after repeated failures."""

from __future__ import annotations

import ipaddress
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


# The IPv6 prefix one site is given: its hosts choose any address in it, freely and at once.
IPV6_SITE_PREFIX = 64


def client_address(request: HttpRequest) -> str | None:
    """Return the address a login lock is kept for: the client's, or its IPv6 /64 network.

    The lock is per username and address, and an IPv6 host can take a fresh address of its /64
    for every try: counted one by one, it would never be locked. An IPv4 address written as
    IPv6 by a dual-stack socket (`::ffff:192.0.2.1`) is the IPv4 address, not part of a /64
    every IPv4 client would share. REMOTE_ADDR only, as before: a client's X-Forwarded-For is
    never believed here (daphne's `--proxy-headers` sets REMOTE_ADDR behind a proxy).
    """
    remote = request.META.get("REMOTE_ADDR")
    try:
        address = ipaddress.ip_address(remote or "")
    except ValueError:
        return remote  # not an IP address (a test harness, a unix socket): as it is
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        # The network's first address (axes stores it in an IP address field); built from the
        # number, as a zone (`%eth0`) cannot stand in a network's text.
        network = ipaddress.IPv6Network((int(address), IPV6_SITE_PREFIX), strict=False)
        return str(network.network_address)
    return str(address)


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
