"""The live stream of runs: replay what was stored, then forward what arrives, as HTML.

`RunFollowMixin` is the one implementation: the run page's own socket (htmx ws) uses it, and
the playground's socket uses it to stream the run it just started without a second handshake.
Both receive the partials of `templates/runs/_output.html` that the first page load renders,
so a reload and a live page show the same thing. The group messages stay the plain JSON that
`run_record_event` sends (agents' long requests wait on them too): HTML is made here.

A socket stays open for as long as its run goes, so access is not only checked as it connects:
every read of the database (the first replay, a catch-up after a silence) asks again whether
its user may still see the run, and live messages ask at most once a second
(`studio.live.AccessRecheck`, as the build log's socket does). A person who left the team
(or was deactivated) stops receiving the run within that second.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from django.template.loader import render_to_string

from ..studio import live
from ..studio.live import AccessRecheck, Silence, connecting_user
from ..studio.session_bound import SessionBoundWebsocketConsumer
from .models import Run, RunStatus
from .selectors import (
    pane_regions,
    run_events_after,
    run_for_user,
    run_head,
    run_state,
)
from .services import run_group

CLOSE_NOT_FOUND = 4404
CLOSE_NORMAL = 1000
TEMPLATE = "runs/_output.html"
# Rendering costs some 0.1 ms an event: a live batch this small is rendered on the loop (a
# thread hand-over would delay it as much), a longer one (a replay) in a thread.
RENDER_ON_LOOP_EVENTS = 50


class RunStatusPayload(TypedDict):
    """A run's status as the following page learns it (the playground's JSON socket)."""

    type: str  # "status"
    run_id: str
    status: str
    outcome: str
    message: str


class RunFollowMixin:
    """Forward one run's events to this socket as HTML fragments, each once and in order."""

    user: Any = None  # who watches: each read checks again that they may see the run
    following: str | None = None
    following_run: Run | None = None
    sent: int = 0
    ended: bool = False  # the page was shown the followed run's end
    _replaying: asyncio.Lock | None = None
    _silence: Silence | None = None
    _access: AccessRecheck | None = None

    async def send_run_html(self, run_id: str, html: str) -> None:
        """Deliver fragments of the run's pane to the page."""
        raise NotImplementedError

    async def run_status_sent(self, payload: RunStatusPayload) -> None:
        """React to a status the page was just shown (after its fragment)."""

    async def run_access_lost(self, run_id: str) -> None:
        """React to the watcher no longer being allowed to see the run (it is unfollowed)."""

    def _lock(self) -> asyncio.Lock:
        if self._replaying is None:
            self._replaying = asyncio.Lock()
        return self._replaying

    async def follow_run(self, run_id: str, *, after: int = 0) -> None:
        """Stream a run from the event after `after`: the stored ones first, then live ones.

        The stored ones replace the pane's live lines whole: a page that reconnects with the
        same `after` (the htmx ws extension reuses its URL) ends with each event once.
        """
        # Live events wait for the replay (a follow may start from a task beside the socket's
        # own message loop): sending a newer event first would drop the older ones.
        async with self._lock():
            if self.following is not None and self.following != run_id:
                await self.channel_layer.group_discard(run_group(self.following), self.channel_name)
            self.following, self.sent, self.ended = run_id, after, False
            # Join before reading the stored events: nothing can fall between the two, and
            # what arrives twice is dropped by sequence number.
            await self.channel_layer.group_add(run_group(run_id), self.channel_name)
            stored = await database_sync_to_async(_stored)(run_id, after, self.user)
            if stored is None:
                await self._access_lost(run_id)
                return
            run, events = stored
            self._recheck().passed()
            self.following_run = run
            parts = await self._events_html(events, replace=True)
            self.sent = max([after, *(e["seq"] for e in events)])
            await self._send_run_status(await self._send_parts(run_id, parts), run)
        if not self.ended:
            # A lost last message would leave the page waiting: read the run after a silence.
            self._watch().start()

    async def unfollow_run(self) -> None:
        """Stop forwarding the run this socket follows."""
        self._watch().stop()
        if self.following is not None:
            await self.channel_layer.group_discard(run_group(self.following), self.channel_name)
            self.following = None
            self.following_run = None

    async def run_events(self, message: dict[str, Any]) -> None:
        """Forward live events, after any the group lost (read from the database)."""
        async with self._lock():
            run_id = message["run_id"]
            if run_id != self.following:
                return
            if not await self._still_allowed(run_id):
                await self._access_lost(run_id)
                return
            self._watch().heard()
            events = [e for e in message["events"] if e["seq"] > self.sent]
            if not events:
                return
            if events[0]["seq"] > self.sent + 1:
                # A live message went missing (published while this process was reconnecting
                # to Redis): the database has every event, so fill the gap from there first.
                events = await self._missed(before=events[0]["seq"]) + events
            self.sent = events[-1]["seq"]
            for part in await self._events_html(events, replace=False):
                await self.send_run_html(run_id, part)

    async def run_status(self, message: dict[str, Any]) -> None:
        """Forward a status change; a finished run's last events are read first if missing."""
        async with self._lock():
            run_id = message["run_id"]
            if run_id != self.following or self.ended:
                return  # the end was already shown (read from the database): once is enough
            if not await self._still_allowed(run_id):
                await self._access_lost(run_id)
                return
            self._watch().heard()
            html = ""
            if message["status"] in RunStatus.finished():
                missed = await self._missed(before=None)
                if missed:
                    self.sent = missed[-1]["seq"]
                    parts = await self._events_html(missed, replace=False)
                    html = await self._send_parts(run_id, parts)
            await self._send_status(
                html,
                RunStatusPayload(type="status", run_id=run_id, status=message["status"],
                                 outcome=message["outcome"], message=message["message"]),
                notes=message.get("notes"),
            )  # fmt: skip

    def _watch(self) -> Silence:
        if self._silence is None:
            self._silence = Silence(self._catch_up, lambda: live.SILENCE_SECONDS)
        return self._silence

    async def _catch_up(self) -> bool:
        """Show what the database has beyond the last event sent, and the run's end if it ended.

        Tell whether the run is still worth waiting for.
        """
        async with self._lock():
            run_id = self.following
            if run_id is None or self.ended:
                return False
            stored = await database_sync_to_async(_stored)(run_id, self.sent, self.user)
            if stored is None:
                await self._access_lost(run_id)
                return False
            run, events = stored
            self._recheck().passed()
            events = [e for e in events if e["seq"] > self.sent]
            parts = await self._events_html(events, replace=False)
            if events:
                self.sent = events[-1]["seq"]
            if run.is_finished:
                self.following_run = run
                await self._send_run_status(await self._send_parts(run_id, parts), run)
                return False
            for part in parts:
                await self.send_run_html(run_id, part)
            return True

    def _recheck(self) -> AccessRecheck:
        if self._access is None:
            self._access = AccessRecheck()
        return self._access

    async def _still_allowed(self, run_id: str) -> bool:
        """Tell whether the watcher may still see the run (asked at most once a second)."""

        async def visible() -> bool:
            return await database_sync_to_async(_visible_run)(self.user, run_id) is not None

        return await self._recheck().still_allowed(visible)

    async def _access_lost(self, run_id: str) -> None:
        """Stop streaming a run its watcher may no longer see, and tell the consumer."""
        await self.unfollow_run()
        await self.run_access_lost(run_id)

    async def _send_run_status(self, html: str, run: Run) -> None:
        state = run_state(run)
        await self._send_status(
            html,
            RunStatusPayload(type="status", run_id=str(run.pk), status=state["status"],
                             outcome=state["outcome"], message=state["message"]),
            notes=state["notes"],
        )  # fmt: skip

    async def _missed(self, *, before: int | None) -> list[dict[str, Any]]:
        assert self.following is not None
        stored = await database_sync_to_async(run_events_after)(self.following, self.sent)
        return [e for e in stored if before is None or e["seq"] < before]

    async def _send_status(
        self, html: str, payload: RunStatusPayload, *, notes: list[str] | None = None
    ) -> None:
        """Show a status, and the run's notes when they are known (None: leave them shown)."""
        if payload["status"] in RunStatus.finished():
            self.ended = True
        head = run_head(
            status=payload["status"], message=payload["message"], outcome=payload["outcome"]
        )
        html += render_to_string(
            f"{TEMPLATE}#run-status", {"run": self.following_run, "head": head, "notes": notes}
        )
        await self.send_run_html(payload["run_id"], html)
        await self.run_status_sent(payload)

    async def _events_html(self, events: list[dict[str, Any]], *, replace: bool) -> list[str]:
        """Render events as the pane's fragments, in parts that each fit in a frame, off the loop.

        A replay of a long run (up to `JAZZMINE_MAX_RUN_EVENTS` lines) is seconds of CPU:
        on the loop it froze every socket and request of the web process meanwhile, and a
        page could ask for it again and again (reconnecting, or `follow` with `after` 0).
        """
        run = self.following_run
        assert run is not None
        if not replace and not events:
            return []
        if len(events) <= RENDER_ON_LOOP_EVENTS:
            return events_html_parts(run, events, replace=replace)
        return await asyncio.to_thread(events_html_parts, run, events, replace=replace)

    async def _send_parts(self, run_id: str, parts: list[str]) -> str:
        """Send every part but the last; return the last ("" for none), to go with a status."""
        for part in parts[:-1]:
            await self.send_run_html(run_id, part)
        return parts[-1] if parts else ""


class RunConsumer(RunFollowMixin, SessionBoundWebsocketConsumer):
    """`ws/runs/<id>/?after=N`: a run page's pane, from the event after the last it rendered."""

    # Signed out, it closes as for a run one may not see, as it does for a deactivated watcher.
    signed_out_close_code = CLOSE_NOT_FOUND

    async def connect(self) -> None:
        user = await connecting_user(self)
        if user is None:
            return
        self.user = user
        run_id = self.scope["url_route"]["kwargs"]["run_id"]
        run = await database_sync_to_async(_visible_run)(user, run_id)
        if run is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self.accept()
        await self.follow_run(str(run.pk), after=_after(self.scope))

    async def run_access_lost(self, run_id: str) -> None:
        # As for a run one may not see at all; the extension's retries are refused the same.
        await self.close(code=CLOSE_NOT_FOUND)

    async def disconnect(self, code: int) -> None:
        await self.unfollow_run()

    async def send_run_html(self, run_id: str, html: str) -> None:
        await self.send(text_data=html)

    async def run_status_sent(self, payload: RunStatusPayload) -> None:
        # Nothing more will come: a normal close, which the ws extension does not retry.
        if payload["status"] in RunStatus.finished():
            await self.unfollow_run()
            await self.close(code=CLOSE_NORMAL)


# A socket frame holds at most 1 MiB in daphne (autobahn's payload limit): a bigger one is never
# sent, and the socket ends with it. A long run's replay (20,000 lines: 4 MB of fragments) goes
# in parts of at most this many bytes (a playground socket wraps them in JSON, which escapes
# the markup's quotes); one event's text is cut at `selectors.SHOWN_CHARS`, so one event fits.
FRAME_BUDGET_BYTES = 700_000


# Events rendered together at most: a replay is rendered once, a part at a time, and a part of
# this many ordinary lines (about 200 bytes each) fits in a frame. Rendering a long replay whole
# first (to split it after) did the work twice, and its garbage held the loop in collections.
RENDER_PART_EVENTS = 2_000


def events_html_parts(run: Run, events: list[dict[str, Any]], *, replace: bool) -> list[str]:
    """Return the events' fragments in parts that each fit in a frame (the first replacing)."""
    parts: list[str] = []
    for start in range(0, max(len(events), 1), RENDER_PART_EVENTS):
        part = events[start : start + RENDER_PART_EVENTS]
        parts += _parts_that_fit(run, part, replace=replace and start == 0)
    return parts


def _parts_that_fit(run: Run, events: list[dict[str, Any]], *, replace: bool) -> list[str]:
    # Long lines (one event's text is up to `selectors.SHOWN_CHARS`) make a part too big:
    # halve it until each half fits; one event always fits.
    html = events_html(run, events, replace=replace)
    if len(events) <= 1 or len(html.encode()) <= FRAME_BUDGET_BYTES:
        return [html]
    half = len(events) // 2
    return _parts_that_fit(run, events[:half], replace=replace) + _parts_that_fit(
        run, events[half:], replace=False
    )


def events_html(run: Run, events: list[dict[str, Any]], *, replace: bool) -> str:
    """Return the fragments of a run's pane that these events add (or, replacing, show)."""
    regions = pane_regions(run, events)
    return render_to_string(
        f"{TEMPLATE}#run-events",
        {
            "run": run,
            "replace": replace,
            "timeline": regions.timeline,
            "logs": regions.logs,
            "result": regions.result,
            "error": regions.error,
        },
    )


def _after(scope: dict[str, Any]) -> int:
    query = parse_qs(scope.get("query_string", b"").decode())
    try:
        return max(0, int(query.get("after", ["0"])[0]))
    except ValueError:
        return 0


def _visible_run(user: Any, run_id: Any) -> Run | None:
    """Return the run if this user may see it now (by team), else None."""
    # Whether the user is still signed in (not deactivated, logged out or expired) is the
    # socket's own check (`SessionBound*`), on every message it handles and frame it sends.
    if user is None:
        return None
    return run_for_user(user, run_id)


def _stored(run_id: str, after: int, user: Any) -> tuple[Run, list[dict[str, Any]]] | None:
    """Return the run and its events after `after`, or None when the user may not see it."""
    # The row first, then the events: a run that reads as finished has all of its events.
    run = _visible_run(user, run_id)
    if run is None:
        return None
    return run, run_events_after(run, after)
