"""How many websockets one person holds open in one web process.

Each open socket of an unfinished run holds a channel-layer subscription and reads the
database every few seconds, and every socket's database calls in a process share one thread:
one account opening sockets by the thousand (a script, or a page reloaded in a loop) slowed
every other person's live pages. The agents' long requests have their cap (`reviews.api`);
this is the sockets'. A handshake past it is refused before any consumer runs (the browser's
socket retries with its back-off, and connects once one of the person's pages closes).
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from django.conf import settings

logger = logging.getLogger(__name__)


class SocketsPerUser:
    """ASGI middleware inside Channels' auth: at most N open sockets per signed-in user.

    Signed-out sockets pass: each consumer refuses them itself, at once.
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        # Touched on the process's one event loop only, between awaits: no lock needed.
        self._open: Counter[Any] = Counter()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        user = scope.get("user")
        if scope.get("type") != "websocket" or not getattr(user, "is_authenticated", False):
            return await self.app(scope, receive, send)
        key = user.pk
        if not self._take(key):
            logger.warning(
                "refused a websocket of user %s: %d open already in this process",
                key,
                settings.JAZZMINE_MAX_SOCKETS_PER_USER,
            )
            return await _refuse(receive, send)
        try:
            return await self.app(scope, receive, send)
        finally:
            self._release(key)

    def _take(self, key: Any) -> bool:
        if self._open[key] >= settings.JAZZMINE_MAX_SOCKETS_PER_USER:
            return False
        self._open[key] += 1
        return True

    def _release(self, key: Any) -> None:
        self._open[key] -= 1
        if self._open[key] <= 0:
            del self._open[key]


async def _refuse(receive: Any, send: Any) -> None:
    """Refuse a handshake: a close before the accept (the server answers it with a 403)."""
    message = await receive()
    if message.get("type") == "websocket.connect":
        await send({"type": "websocket.close"})
