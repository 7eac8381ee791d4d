"""Cookies set over HTTPS are marked Secure: the browser then never sends them over plain HTTP.

Django's `SESSION_COOKIE_SECURE` and `CSRF_COOKIE_SECURE` are fixed for a deployment, and the
studio is served both ways: over plain HTTP on loopback (`scripts/run.sh`, development, the
browser tests), where a Secure cookie would not be stored, and over HTTPS by a team, where a
cookie without the flag goes out in clear text to any `http://` URL of the same host that an
attacker on the network makes the browser open. So the flag follows the request's own scheme
(`request.is_secure()`: TLS at daphne, or a TLS proxy's `X-Forwarded-Proto` that daphne was told
to believe with `--proxy-headers`; a client's own header is not believed).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponseBase
from django.utils.deprecation import MiddlewareMixin


class SecureCookiesOverHttpsMiddleware(MiddlewareMixin):
    """Mark every cookie of a response to an HTTPS request Secure.

    Listed above the session, CSRF and messages middleware, so that it sees their cookies.
    """

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if request.is_secure():
            for morsel in response.cookies.values():
                morsel["secure"] = True
        return response
