"""The live stream of runs: replay what was stored, then forward what arrives.

`RunFollowMixin` is the one implementation: the run page's own socket uses it, and the
playground's socket uses it to stream the run it just started without a second handshake.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from ..studio.live import connecting_user
from .models import Run
from .selectors import run_events_after, run_for_user, run_state
from .services import run_group

CLOSE_NOT_FOUND = 4404


class RunFollowMixin:
    """Forward one run's events to this socket, each once and in order."""

    following: str | None = None
    sent: int = 0
    _replaying: asyncio.Lock | None = None

    def _lock(self) -> asyncio.Lock:
        if self._replaying is None:
            self._replaying = asyncio.Lock()
        return self._replaying

    async def follow_run(self, run_id: str, *, after: int = 0) -> None:
        """Stream a run from the event after `after`: the stored ones first, then live ones."""
        # Live events wait for the replay (a follow may start from a task beside the socket's
        # own message loop): sending a newer event first would drop the older ones.
        async with self._lock():
            if self.following is not None and self.following != run_id:
                await self.channel_layer.group_discard(run_group(self.following), self.channel_name)
            self.following, self.sent = run_id, after
            # Join before reading the stored events: nothing can fall between the two, and
            # what arrives twice is dropped by sequence number.
            await self.channel_layer.group_add(run_group(run_id), self.channel_name)
            events, state = await database_sync_to_async(_stored)(run_id, after)
            for event in events:
                await self._send_event(run_id, event)
            await self.send_json({"type": "status", "run_id": run_id, **state})

    async def unfollow_run(self) -> None:
        """Stop forwarding the run this socket follows."""
        if self.following is not None:
            await self.channel_layer.group_discard(run_group(self.following), self.channel_name)
            self.following = None

    async def _send_event(self, run_id: str, event: dict[str, Any]) -> None:
        if run_id != self.following or event["seq"] <= self.sent:
            return
        if event["seq"] > self.sent + 1:
            # A live message went missing (a full channel, another process's send that
            # overtook): the database has every event, so fill the gap from there first.
            missed, _state = await database_sync_to_async(_stored)(run_id, self.sent)
            for stored in missed:
                if self.sent < stored["seq"] < event["seq"]:
                    self.sent = stored["seq"]
                    await self.send_json({"type": "event", "run_id": run_id, "event": stored})
        self.sent = event["seq"]
        await self.send_json({"type": "event", "run_id": run_id, "event": event})

    async def run_event(self, message: dict[str, Any]) -> None:
        """Forward one live event."""
        async with self._lock():
            await self._send_event(message["run_id"], message["event"])

    async def run_status(self, message: dict[str, Any]) -> None:
        """Forward a status change."""
        async with self._lock():
            if message["run_id"] != self.following:
                return
            await self.send_json(
                {
                    "type": "status",
                    "run_id": message["run_id"],
                    "status": message["status"],
                    "outcome": message["outcome"],
                    "message": message["message"],
                }
            )


class RunConsumer(RunFollowMixin, AsyncJsonWebsocketConsumer):
    """Stream a run's events; `?after=N` resumes after the last sequence number a client has."""

    async def connect(self) -> None:
        user = await connecting_user(self)
        if user is None:
            return
        run_id = self.scope["url_route"]["kwargs"]["run_id"]
        run = await database_sync_to_async(run_for_user)(user, run_id)
        if run is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self.accept()
        await self.follow_run(str(run.pk), after=_after(self.scope))

    async def disconnect(self, code: int) -> None:
        await self.unfollow_run()


def _after(scope: dict[str, Any]) -> int:
    query = parse_qs(scope.get("query_string", b"").decode())
    try:
        return max(0, int(query.get("after", ["0"])[0]))
    except ValueError:
        return 0


def _stored(run_id: str, after: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    run = Run.objects.select_related("sandbox").get(pk=run_id)
    return run_events_after(run, after), run_state(run)
