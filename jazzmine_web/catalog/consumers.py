"""Stream an image build's log to the browser as htmx out-of-band fragments.

A busy build sends a line after another for minutes, so access is not only checked as the
socket connects: every read of the build asks again, and live lines ask at most once a second
(`studio.live.AccessRecheck`, as the run socket does). Someone taken out of the team stops
receiving the log within that second, and the socket closes as for a build they may not see.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from django.template.loader import render_to_string

from ..studio import live as studio_live
from ..studio.live import AccessRecheck, Silence, connecting_user
from ..studio.session_bound import SessionBoundWebsocketConsumer
from . import live
from .image_truth import image_truth
from .models import BuildStatus, ImageBuild
from .selectors import builds_for_user, sandbox_image_status

TEMPLATE = "catalog/sandbox_detail.html"
FINISHED = (BuildStatus.SUCCEEDED, BuildStatus.FAILED)
CLOSE_NOT_FOUND = 4404


def _visible(user: Any, build_id: int) -> bool:
    return builds_for_user(user).filter(pk=build_id).exists()


def _snapshot(user: Any, build_id: int) -> dict[str, Any] | None:
    build = builds_for_user(user).filter(pk=build_id).first()
    if build is None:
        return None
    # Told as the page tells it, so the badge and the Build button agree with a reload.
    return {
        "build": build,
        "image": image_truth(build.sandbox, sandbox_image_status(build.sandbox)),
    }


class BuildLogConsumer(SessionBoundWebsocketConsumer):
    """`ws/builds/<id>/`: the whole log so far, then each new line, then the final status."""

    # Set once the socket is accepted and its stream set up; a live message handled before (or
    # after access was lost) is dropped: lines queued on the channel while the handshake was
    # refused must never reach a consumer that has no stream, nor anyone outside the team.
    streaming: bool = False

    async def connect(self) -> None:
        user = await connecting_user(self, close_code=4401)
        if user is None:
            return
        self.build_id = int(self.scope["url_route"]["kwargs"]["build_id"])
        # Someone else's build (or none) is refused before its group is joined: its lines
        # never reach this socket's channel at all.
        if not await database_sync_to_async(_visible)(user, self.build_id):
            await self.close(code=CLOSE_NOT_FOUND)
            return
        # Join before reading: lines stored after the read arrive by the group, and the
        # sequence number drops those the read already had.
        self.group = live.build_group(self.build_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        snapshot = await database_sync_to_async(_snapshot)(user, self.build_id)
        if snapshot is None:
            await self.channel_layer.group_discard(self.group, self.channel_name)
            # Access lost between the two reads: say nothing more.
            await self.close(code=CLOSE_NOT_FOUND)
            return
        self.access = AccessRecheck()
        self.access.passed()  # by the snapshot's read
        await self.accept()
        # A lost last message would leave the Build button away: read the build after a silence.
        self.silence = Silence(self._catch_up, lambda: studio_live.SILENCE_SECONDS)
        build: ImageBuild = snapshot["build"]
        self.sent_seq = build.line_count
        self.streaming = True
        await self.send(text_data=self._render_snapshot(build, snapshot["image"]))
        if build.status in FINISHED:
            await self.close()
            return
        self.silence.start()

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "silence"):
            self.silence.stop()
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def build_line(self, event: dict[str, Any]) -> None:
        if not self.streaming:
            return
        if not await self.access.still_allowed(self._still_visible):
            await self._access_lost()
            return
        self.silence.heard()
        if event["seq"] <= self.sent_seq:
            return
        if event["seq"] > self.sent_seq + 1:  # lines went missing: the stored log has them
            await self._catch_up()
            return
        self.sent_seq = event["seq"]
        html = render_to_string(
            f"{TEMPLATE}#build-log-append", {"seq": event["seq"], "line": event["line"]}
        )
        await self.send(text_data=html)

    async def _catch_up(self) -> bool:
        """After a silence: send what the store has beyond this page; tell whether to go on."""
        return await self._show_stored(always=False)

    async def build_status(self, event: dict[str, Any]) -> None:
        if not self.streaming:
            return
        self.silence.heard()
        await self._show_stored(always=True)

    async def _show_stored(self, *, always: bool) -> bool:
        """Read the build and send what the page lacks; tell whether it is still going.

        The status is read, not taken from the message, so the badge and the Build button
        agree with a reload. When the stored log is ahead of the page it is sent whole: lines
        lost on the way (a layer reconnecting keeps nothing), or a message handled late while
        the build moved on past lines still queued behind it. Once the build has ended no
        later line would show that gap, and the socket closes.
        """
        snapshot = await database_sync_to_async(_snapshot)(self.scope["user"], self.build_id)
        if snapshot is None:
            await self._access_lost()
            return False
        self.access.passed()
        build: ImageBuild = snapshot["build"]
        finished = build.status in FINISHED
        # Compared after the read: lines that arrived live meanwhile are never taken back.
        if build.line_count > self.sent_seq:
            self.sent_seq = build.line_count
            await self.send(text_data=self._render_snapshot(build, snapshot["image"]))
        elif always or finished:
            html = render_to_string(
                f"{TEMPLATE}#build-status-oob", {"build": build, "image": snapshot["image"]}
            )
            await self.send(text_data=html)
        if finished:
            await self.close()
            return False
        return True

    async def _still_visible(self) -> bool:
        return await database_sync_to_async(_visible)(self.scope["user"], self.build_id)

    async def _access_lost(self) -> None:
        """Stop streaming a build its watcher may no longer see: nothing more is sent."""
        self.streaming = False
        self.silence.stop()
        await self.channel_layer.group_discard(self.group, self.channel_name)
        # As for a build one may not see at all; the page's retries are refused the same.
        await self.close(code=CLOSE_NOT_FOUND)

    def _render_snapshot(self, build: ImageBuild, image: Any) -> str:
        lines = build.log.splitlines()
        return render_to_string(
            f"{TEMPLATE}#build-log-snapshot",
            {"build": build, "lines": list(enumerate(lines, start=1)), "image": image},
        )
