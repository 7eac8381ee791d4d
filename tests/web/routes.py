"""The site's own routes, read from the URL configuration, for sweeps over every path."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from django.urls import URLPattern, URLResolver, get_resolver

PARAMETER = re.compile(r"<(?:\w+:)?(\w+)>")


def site_routes(
    resolver: URLResolver | None = None, prefix: str = "", converters: dict[str, Any] | None = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield every route of the site but the admin's, with the converter of each parameter."""
    for entry in (resolver or get_resolver()).url_patterns:
        route = getattr(entry.pattern, "_route", None)
        if route is None:
            continue  # a regex pattern (the admin's own): not this app's paths
        joined = {**(converters or {}), **entry.pattern.converters}
        if isinstance(entry, URLResolver):
            yield from site_routes(entry, prefix + route, joined)
        elif isinstance(entry, URLPattern) and not (prefix + route).startswith("admin/"):
            yield prefix + route, joined


def route_fill(route: str, values: dict[str, str]) -> str:
    """Return the path of a route with its parameters given `values`, by name."""
    return "/" + PARAMETER.sub(lambda m: values[m.group(1)], route)
