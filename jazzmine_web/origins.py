"""Websocket Origin check by scheme, host and port.

A browser sends its session cookie with any websocket handshake, whichever page opened it, so
the Origin header is what tells our pages from another site's. Channels'
`AllowedHostsOriginValidator` compares host names only: a page served from another port of the
same host (`http://127.0.0.1:9999`, any local dev server) would pass. Here an origin is accepted
only when it is exactly

- the origin of the handshake itself: the connection's scheme (`ws` → `http`, `wss` → `https`)
  and its `Host` header, with that host in `ALLOWED_HOSTS`; or
- one of `CSRF_TRUSTED_ORIGINS` (exact entries, e.g. the public `https://` origin behind a
  TLS-terminating proxy).

A handshake without an Origin header (or with `Origin: null`) is refused: every browser sends a
real one, so only non-browser clients omit it, and they must send a matching one too.
A handshake without a Host header (not HTTP/1.1; test harnesses) is judged against
`ALLOWED_HOSTS` on the scheme's default port.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

DEFAULT_PORTS = {"http": 80, "https": 443}
WS_TO_HTTP = {"ws": "http", "wss": "https", "http": "http", "https": "https"}

Origin = tuple[str, str, int]


def origin_parse(value: str) -> Origin | None:
    """Return (scheme, host, port) of an origin, ports made explicit; None if it is not one."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return None
    if parts.username is not None or parts.query or parts.fragment:
        return None
    return scheme, parts.hostname.lower().rstrip("."), port or DEFAULT_PORTS[scheme]


def origin_allowed(*, origin: str | None, scheme: str, host: str | None) -> bool:
    """Tell whether a handshake's Origin is this server's own or a configured trusted one."""
    if not origin:
        return False
    claimed = origin_parse(origin)
    if claimed is None:
        return False
    trusted = {origin_parse(o) for o in settings.CSRF_TRUSTED_ORIGINS} - {None}
    if claimed in trusted:
        return True
    own_scheme = WS_TO_HTTP.get(scheme.lower())
    if own_scheme is None:
        return False
    if host is None:
        domain, port = claimed[1], DEFAULT_PORTS[own_scheme]
    else:
        own = origin_parse(f"{own_scheme}://{host}")
        if own is None:
            return False
        domain, port = own[1], own[2]
    hostname, _ = split_domain_port(domain if ":" not in domain else f"[{domain}]")
    if not validate_host(hostname or domain, settings.ALLOWED_HOSTS):
        return False
    return claimed == (own_scheme, domain, port)


class OriginValidator:
    """ASGI middleware: refuse a websocket handshake whose Origin is not exactly allowed."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket":
            headers = {k.lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            allowed = origin_allowed(
                origin=headers.get(b"origin"),
                scheme=scope.get("scheme", "ws"),
                host=headers.get(b"host"),
            )
            if not allowed:
                return await WebsocketDenier.as_asgi()(scope, receive, send)
        return await self.app(scope, receive, send)
