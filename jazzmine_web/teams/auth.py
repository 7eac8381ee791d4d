"""Bearer-token authentication and the JSON error shape for the agents' API."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.contrib.auth.decorators import login_not_required
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from ..studio.http import bearer_token
from .models import ApiToken, RevokeReason
from .services import api_token_touch, hash_token, password_mac_matches

View = Callable[..., HttpResponse]


def json_error(code: str, message: str, *, status: int) -> JsonResponse:
    """Return an API error in the stable shape `{"error": {"code", "message"}}`."""
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


@csrf_exempt  # an API client never has the CSRF cookie: it would get an HTML 403 instead
@login_not_required
def api_not_found(request: HttpRequest, rest: str = "") -> JsonResponse:
    """Answer a path under /api/ that names no endpoint, in the API's own error shape.

    Without it such a path got the site's HTML 404, and a POST missing its final slash made
    Django's slash-appending fail with a server error (it cannot redirect a POST).
    """
    return json_error(
        "unknown_endpoint",
        f"No API endpoint at {request.method} {request.path}: paths end with '/', and ids are "
        "lowercase UUIDs or numbers (the README's Agents section lists the endpoints).",
        status=404,
    )


def _active_tokens() -> QuerySet[ApiToken]:
    """Return the tokens not revoked whose user is still active.

    One more condition is checked on the row, not in SQL (`_bound`): the token is bound to
    its user's password as it is now.
    """
    return ApiToken.objects.filter(revoked_at__isnull=True, user__is_active=True)


def _bound(mac: str, password_hash: str) -> bool:
    """Tell whether a token still belongs to its user's password: fail closed, in this process.

    A password change revokes the user's tokens (`teams.receivers`); this is what holds when
    nothing revoked them, whatever path changed the password (a queryset update, a script).
    The user's row is read by the same query already: no query is added.
    """
    return password_mac_matches(mac, password_hash)


def token_from_request(request: HttpRequest) -> ApiToken | None:
    """Return the active token named by `Authorization: Bearer <token>`, if any."""
    raw = bearer_token(request.headers.get("Authorization", ""))
    if not raw:
        return None
    token = _active_tokens().select_related("user").filter(token_hash=hash_token(raw)).first()
    if token is None or not _bound(token.password_mac, token.user.password):
        return None
    return token


def token_still_active(token_id: int) -> bool:
    """Tell whether a token still authenticates: a long request rechecks it on every turn."""
    row = _active_tokens().filter(pk=token_id).values_list("password_mac", "user__password").first()
    return row is not None and _bound(*row)


def _authenticate(request: HttpRequest) -> HttpResponse | None:
    """Set `request.user` and `request.api_token` from the bearer token; else return the 401."""
    token = token_from_request(request)
    if token is None:
        response = json_error("unauthorized", _why_not(request), status=401)
        response["WWW-Authenticate"] = 'Bearer realm="jazzmine"'
        return response
    api_token_touch(token=token)
    request.user = token.user
    request.api_token = token  # type: ignore[attr-defined]
    return None


def _why_not(request: HttpRequest) -> str:
    """Say why a request's token opens nothing: an agent whose token was revoked (by a
    password change, say) read only "send a valid token" and could not tell its own fault
    from the server's. Only the holder of the token's raw value learns its state."""
    usage = "Send a valid API token as 'Authorization: Bearer <token>'."
    raw = bearer_token(request.headers.get("Authorization", ""))
    if not raw:
        return usage
    token = ApiToken.objects.select_related("user").filter(token_hash=hash_token(raw)).first()
    if token is None:
        return f"No such API token. {usage}"
    if token.revoked_at is not None:
        reason = token.revoked_reason
        why = RevokeReason(reason).label if reason in RevokeReason.values else "revoked"
        when = token.revoked_at.strftime("%Y-%m-%d %H:%M UTC")
        return f"This API token was revoked on {when} ({why}): make a new one at /account/tokens/."
    if not token.user.is_active:
        return "This API token's account is deactivated."
    return (
        "This API token no longer matches its account's password (it was changed): "
        "make a new one at /account/tokens/."
    )


def api_token_required(view: View) -> View:
    """Authenticate a JSON view, sync or async, by bearer token; else answer 401 JSON.

    An async view stays async (its long waits must not hold a thread): only the token's
    database look-up and touch run in a thread.
    """
    wrapper: View
    if iscoroutinefunction(view):

        @functools.wraps(view)
        async def async_wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            denied = await sync_to_async(_authenticate)(request)
            if denied is not None:
                return denied
            return await view(request, *args, **kwargs)

        wrapper = async_wrapper
    else:

        @functools.wraps(view)
        def sync_wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            denied = _authenticate(request)
            if denied is not None:
                return denied
            return view(request, *args, **kwargs)

        wrapper = sync_wrapper
    # Token views never use the session, so neither login redirects nor CSRF apply.
    return csrf_exempt(login_not_required(wrapper))
