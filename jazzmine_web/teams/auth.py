"""Bearer-token authentication and the JSON error shape for the agents' API."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from .models import ApiToken
from .services import api_token_touch, hash_token

View = Callable[..., HttpResponse]


def json_error(code: str, message: str, *, status: int) -> JsonResponse:
    """Return an API error in the stable shape `{"error": {"code", "message"}}`."""
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


def token_from_request(request: HttpRequest) -> ApiToken | None:
    """Return the active token named by `Authorization: Bearer <token>`, if any."""
    header = request.headers.get("Authorization", "")
    scheme, _, raw = header.partition(" ")
    if scheme.lower() != "bearer" or not raw.strip():
        return None
    return (
        ApiToken.objects.select_related("user")
        .filter(token_hash=hash_token(raw.strip()), revoked_at__isnull=True, user__is_active=True)
        .first()
    )


def api_token_required(view: View) -> View:
    """Authenticate a JSON view by bearer token, setting `request.user`; else answer 401 JSON."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        token = token_from_request(request)
        if token is None:
            response = json_error(
                "unauthorized",
                "Send a valid API token as 'Authorization: Bearer <token>'.",
                status=401,
            )
            response["WWW-Authenticate"] = 'Bearer realm="jazzmine"'
            return response
        api_token_touch(token=token)
        request.user = token.user
        request.api_token = token  # type: ignore[attr-defined]
        return view(request, *args, **kwargs)

    # Token views never use the session, so neither login redirects nor CSRF apply.
    return csrf_exempt(login_not_required(wrapper))
