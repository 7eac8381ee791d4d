"""Websockets that live no longer than the login they were opened with.

A browser's socket is authenticated once, at its handshake, from the session cookie (Channels'
`AuthMiddlewareStack`). Every HTTP request asks Django again, and Django refuses a session that
was logged out, has expired, belongs to a deactivated user, or predates its user's last password
change. An open socket asked nothing more: whoever held the cookie (a stolen one too) kept a
playground that starts runs and a review queue that streams the team's submissions after the
person logged out, changed the password or was deactivated.

Here every message a socket handles (a frame from the page, a channel-layer message) and every
frame it sends asks Django's question again, relying on the last answer for at most
`SIGNED_IN_RECHECK_SECONDS` (a check per message would be two queries per keystroke of the
editor). Once the answer is no, the socket closes and handles or sends nothing more.
"""

from __future__ import annotations

import time
from importlib import import_module
from typing import Any

from channels.consumer import AsyncConsumer
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer, AsyncWebsocketConsumer
from django.conf import settings
from django.contrib import auth
from django.http import HttpRequest

from .live import CLOSE_UNAUTHENTICATED

# How long a socket may rely on its last check, as a run socket does for team membership.
SIGNED_IN_RECHECK_SECONDS = 1.0

_ALWAYS_HANDLED = ("websocket.connect", "websocket.disconnect")


def session_signs_in(*, session_key: str | None, user_id: Any) -> bool:
    """Tell whether this session still signs this user in, by the check of every HTTP request.

    `django.contrib.auth.get_user` is what `AuthenticationMiddleware` asks: the session must
    exist and not have expired, its backend must still accept the user (an inactive one is
    refused), and its hash of the password must match the user's current one.
    """
    if not session_key:
        return False
    request = HttpRequest()
    request.session = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    user = auth.get_user(request)
    return bool(user.is_authenticated and user.pk == user_id)


class _SessionBound(AsyncConsumer):
    """Placed after the websocket consumer in the MRO, just above `AsyncConsumer`.

    There it sees every message the consumer dispatches and every message it sends, whichever
    helper sent it (`send_json`, `accept`, `close` all end in `AsyncConsumer.send`).
    """

    # What a signed-out socket is closed with: the code a handshake without a login gets, on
    # which the pages' sockets stop instead of reconnecting.
    signed_out_close_code: int = CLOSE_UNAUTHENTICATED
    _checked_at: float = float("-inf")
    _signed_out: bool = False

    async def dispatch(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "websocket.connect":
            # The handshake's user was read from the session just now, by Django's own check.
            self._checked_at = time.monotonic()
        elif kind not in _ALWAYS_HANDLED and not await self._still_signed_in():
            return
        await super().dispatch(message)

    async def send(self, message: dict[str, Any]) -> None:
        # Frames only: the accept and the close must always get through.
        if message["type"] == "websocket.send" and not await self._still_signed_in():
            return
        await super().send(message)

    async def _still_signed_in(self) -> bool:
        """Tell whether the socket's login still holds; close the socket the first time not."""
        if self._signed_out:
            return False
        now = time.monotonic()
        if now - self._checked_at < SIGNED_IN_RECHECK_SECONDS:
            return True
        user = self.scope.get("user")
        session = self.scope.get("session")
        holds = (
            user is not None
            and user.is_authenticated
            and await database_sync_to_async(session_signs_in)(
                session_key=getattr(session, "session_key", None), user_id=user.pk
            )
        )
        if holds:
            self._checked_at = now
            return True
        self._signed_out = True  # before the await: a concurrent send closes nothing twice
        await self.close(code=self.signed_out_close_code)  # type: ignore[attr-defined]
        return False


class SessionBoundWebsocketConsumer(AsyncWebsocketConsumer, _SessionBound):
    """`AsyncWebsocketConsumer` whose socket ends with the login it was opened with."""


class SessionBoundJsonWebsocketConsumer(AsyncJsonWebsocketConsumer, _SessionBound):
    """`AsyncJsonWebsocketConsumer` whose socket ends with the login it was opened with."""
