"""The live stream of one run: replay what was stored, then forward what arrives."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from ..catalog.live import remember_loop
from .selectors import run_events_after, run_for_user, run_state
from .services import run_group

CLOSE_UNAUTHENTICATED = 4403
CLOSE_NOT_FOUND = 4404


class RunConsumer(AsyncJsonWebsocketConsumer):
    """Stream a run's events; `?after=N` resumes after the last sequence number a client has."""

    async def connect(self) -> None:
        remember_loop()
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        run_id = self.scope["url_route"]["kwargs"]["run_id"]
        run = await database_sync_to_async(run_for_user)(user, run_id)
        if run is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        self.run_id = str(run.pk)
        self.sent = _after(self.scope)
        self.group = run_group(self.run_id)
        # Join before reading the stored events: nothing can fall between the two, and what
        # arrives twice is dropped by sequence number.
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self._replay()

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def _replay(self) -> None:
        events, state = await database_sync_to_async(_stored)(self.run_id, self.sent)
        for event in events:
            await self._send_event(event)
        await self.send_json({"type": "status", **state})

    async def _send_event(self, event: dict[str, Any]) -> None:
        if event["seq"] <= self.sent:
            return
        self.sent = event["seq"]
        await self.send_json({"type": "event", "event": event})

    async def run_event(self, message: dict[str, Any]) -> None:
        """Forward one live event."""
        await self._send_event(message["event"])

    async def run_status(self, message: dict[str, Any]) -> None:
        """Forward a status change."""
        await self.send_json(
            {
                "type": "status",
                "status": message["status"],
                "outcome": message["outcome"],
                "message": message["message"],
            }
        )


def _after(scope: dict[str, Any]) -> int:
    query = parse_qs(scope.get("query_string", b"").decode())
    try:
        return max(0, int(query.get("after", ["0"])[0]))
    except ValueError:
        return 0


def _stored(run_id: str, after: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from .models import Run

    run = Run.objects.select_related("sandbox").get(pk=run_id)
    return run_events_after(run, after), run_state(run)
