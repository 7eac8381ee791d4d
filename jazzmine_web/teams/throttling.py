"""Login throttling: django-axes locks a username out after repeated failures.

Three counts, over the cool-off period, each of failures whatever the password tried:

- a username from one address (`AXES_FAILURE_LIMIT`): someone guessing one person's password;
- a username from every address (`JAZZMINE_LOGIN_USERNAME_FAILURE_LIMIT`): the same guessing
  spread over many addresses (a botnet, rented proxies), each staying under the first limit;
- one address for every username (`JAZZMINE_LOGIN_ADDRESS_FAILURE_LIMIT`): password spraying,
  a few common passwords tried on many usernames, never twice on one.

The last two locks are wider than the attacker: they would keep a person out whose username is
under attack, or who shares an address with the attacker (an office, a campus). So they spare
the addresses where that username logged in before (axes' log of successful logins): the
attacker must first be where the person is, and there meets the first limit.
"""

from __future__ import annotations

import functools
import ipaddress
import operator
from typing import Any

from axes.attempts import get_cool_off_threshold
from axes.backends import AxesStandaloneBackend
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_cool_off, get_failure_limit
from axes.models import AccessAttempt, AccessLog
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.db.models import Q, Sum
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


class LoginLockHandler(AxesDatabaseHandler):
    """Axes' database handler, with the username-wide and address-wide locks added.

    Axes' own lockout parameters stay the pair (username, address), so a successful login
    clears only its own pair's failures: an attacker logging into their own account from the
    address they spray from clears nothing of the spraying, and a person logging in does not
    clear what was tried on them from elsewhere.
    """

    def get_failures(self, request: Any, credentials: dict[str, Any] | None = None) -> int:
        pair = super().get_failures(request, credentials)
        limit = get_failure_limit(request, credentials)
        request.jazzmine_login_lock = "pair" if pair >= limit else ""
        if pair >= limit:
            return pair
        wide = _wide_lock(request, get_client_username(request, credentials))
        if wide:
            request.jazzmine_login_lock = wide
            return limit
        return pair


def _wide_lock(request: Any, username: str | None) -> str:
    """Return which wide lock holds for this username from this address ("": none)."""
    address = getattr(request, "axes_ip_address", None)
    # Each count only for what the request has: no username is not "the username NULL".
    counted = {
        lock: (Q(**{field: value}), limit)
        for lock, field, value, limit in (
            ("username", "username", username, settings.JAZZMINE_LOGIN_USERNAME_FAILURE_LIMIT),
            ("address", "ip_address", address, settings.JAZZMINE_LOGIN_ADDRESS_FAILURE_LIMIT),
        )
        if value is not None
    }
    if not counted:
        return ""
    # Both counts in one query, over the failures within the cool-off.
    failures = AccessAttempt.objects.filter(
        functools.reduce(operator.or_, (match for match, _limit in counted.values())),
        attempt_time__gte=get_cool_off_threshold(request),
    ).aggregate(
        **{lock: Sum("failures_since_start", filter=match, default=0)
           for lock, (match, _limit) in counted.items()}
    )  # fmt: skip
    locks = [lock for lock, (_match, limit) in counted.items() if failures[lock] >= limit]
    if not locks:
        return ""
    # Asked only once a lock holds: a login that is not attacked costs no query more.
    if username is not None and address is not None and _logged_in_from(username, address):
        return ""
    return locks[0]


def _logged_in_from(username: str, address: str) -> bool:
    """Tell whether this username ever logged in from this address (axes logs each login)."""
    return AccessLog.objects.filter(username=username, ip_address=address).exists()


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


def lockout_minutes(request: HttpRequest) -> int | None:
    """Return how many minutes a lock lasts (None: until someone lifts it)."""
    cool_off = get_cool_off(request)
    return max(1, round(cool_off.total_seconds() / 60)) if cool_off else None


def lockout_response(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """Render the login page again, saying the account is locked and for how long (429)."""
    minutes = lockout_minutes(request)
    context = {
        "form": AuthenticationForm(request),
        "locked_out": True,
        # Which count locked it: the page says so (none tells whether the username exists).
        "lock": getattr(request, "jazzmine_login_lock", "") or "pair",
        "cooloff_minutes": minutes,
        "next": request.POST.get("next", "") if request.method == "POST" else "",
    }
    return render(request, "registration/login.html", context, status=429)
