"""Image builds of sandboxes: queue one, claim it on a worker, run it, stream its log."""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable
from typing import Any, TypedDict

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F, QuerySet, Value
from django.db.models.functions import Concat
from django.utils import timezone

from jazzmine.core.tools import ToolRegistry
from jazzmine.interrupts import Interrupt

from ...studio.claims import heartbeat_cutoff, never_started_cutoff, row_claim
from ...studio.enqueue import task_send_after_commit
from ...studio.storable import storable_text
from .. import live
from ..models import BuildStatus, ImageBuild, Sandbox
from .images import sandbox_builder
from .registry import registry_for_sandbox

logger = logging.getLogger(__name__)


class BuildLineEvent(TypedDict):
    """A channel-layer message: one more line of a build's log."""

    type: str  # "build.line"
    build_id: int
    seq: int
    line: str


class BuildStatusEvent(TypedDict):
    """A channel-layer message: a build changed status."""

    type: str  # "build.status"
    build_id: int
    status: str


BuilderFactory = Callable[[ToolRegistry], Any]


def image_build_start(
    *,
    sandbox: Sandbox,
    user: AbstractBaseUser | None,
    background: bool = True,
) -> ImageBuild:
    """Queue a build of a sandbox's image for a worker; reuse one in progress, never a stale one.

    Only a build of the content as it is now is reused: one of earlier content (a tool or a
    dependency changed after it was pressed) builds an image no run uses, and the page said
    "Build #6 is running" of it while the new code got no image.
    """
    registry = registry_for_sandbox(sandbox)
    content = _content_built(registry, sandbox.name)
    running = sandbox.builds.filter(
        status__in=[BuildStatus.QUEUED, BuildStatus.BUILDING], digest=content["digest"]
    ).first()
    if running is not None and not image_build_fail_if_stale(build=running):
        return running
    build = ImageBuild.objects.create(sandbox=sandbox, **content, requested_by=user)
    if background:
        task_send_after_commit("catalog.image_build", build.pk)
    return build


def _content_built(registry: ToolRegistry, sandbox_name: str) -> dict[str, Any]:
    """Return what a build row records of the sandbox content it builds: its whole digest
    (what decides), its checksum (its name on pages) and its tools' checksums."""
    return {
        "digest": registry.sandbox_digest(sandbox_name),
        "checksum": registry.sandbox_checksum(sandbox_name),
        "tool_checksums": {t.name: t.checksum for t in registry.tools(sandbox_name)},
    }


def sandbox_built_wheels(*, sandbox: Sandbox) -> list[str] | None:
    """Return the wheel files of the newest succeeded build of the sandbox as it is now.

    What the Accept button binds: the image of the current dependencies and tools, found by
    the whole digest (other content may share the checksum). None when no such build is
    known, or it does not say which wheels it holds. A build recorded before builds carried
    their digest is none (catalog migration 0010): the admin builds again.
    """
    digest = registry_for_sandbox(sandbox).sandbox_digest(sandbox.name)
    build = (
        sandbox.builds.filter(status=BuildStatus.SUCCEEDED, digest=digest)
        .exclude(wheels=None)
        .order_by("-finished_at", "-pk")
        .first()
    )
    return None if build is None else list(build.wheels)


def image_build_claim(*, build_id: int, worker: str) -> bool:
    """Make a queued build this worker's; False when another worker (or the reaper) got it."""
    rows = ImageBuild.objects.filter(pk=build_id, status=BuildStatus.QUEUED)
    return row_claim(rows.update, worker=worker, status=BuildStatus.BUILDING)


def image_build_fail_if_stale(*, build: ImageBuild) -> bool:
    """End a build whose worker went silent, or that no worker took; tell whether it was."""
    now = timezone.now()
    if build.status == BuildStatus.BUILDING:
        beat = build.heartbeat_at or build.created_at
        if beat >= heartbeat_cutoff(now):
            return False
        why = f"the worker building it ({build.worker or 'unknown'}) stopped answering"
        rows = ImageBuild.objects.filter(
            pk=build.pk, status=BuildStatus.BUILDING, heartbeat_at=build.heartbeat_at
        )
    elif build.status == BuildStatus.QUEUED:
        if build.created_at >= never_started_cutoff(now):
            return False
        why = "no worker took it (is a worker running?)"
        rows = ImageBuild.objects.filter(pk=build.pk, status=BuildStatus.QUEUED)
    else:
        return False
    return _build_abandon(build.pk, rows, why=why, now=now)


def _build_abandon(
    build_id: int, rows: QuerySet[ImageBuild], *, why: str, now: datetime.datetime
) -> bool:
    """Fail a build if `rows` (its row, as it was seen) still matches; tell whether it did."""
    if not rows.update(status=BuildStatus.FAILED, error=why, finished_at=now):
        return False  # it moved meanwhile: its worker is alive after all
    image_build_append_line(build_id=build_id, line=f"ERROR: {why}; the build was abandoned")
    image_build_set_status(build_id=build_id, status=BuildStatus.FAILED, error=why)
    return True


def image_builds_reap(*, judge_silence: bool = True) -> int:
    """End every build whose worker went silent or that nobody took; return how many.

    Without `judge_silence` (as `runs.lifecycle.runs_reap`) no build is taken for lost.
    """
    states = [BuildStatus.QUEUED, BuildStatus.BUILDING] if judge_silence else [BuildStatus.QUEUED]
    stale = ImageBuild.objects.filter(status__in=states)
    return sum(image_build_fail_if_stale(build=build) for build in stale)


def image_builds_of_earlier_life_end(*, worker: str, before: datetime.datetime) -> int:
    """End the builds a worker's previous process held when it died; return how many."""
    why = f"the worker building it ({worker}) was restarted (its previous process was killed)"
    now = timezone.now()
    held = ImageBuild.objects.filter(
        status=BuildStatus.BUILDING, worker=worker, heartbeat_at__lt=before
    ).values_list("pk", "heartbeat_at")
    return sum(
        _build_abandon(
            pk,
            ImageBuild.objects.filter(pk=pk, status=BuildStatus.BUILDING, heartbeat_at=beat),
            why=why,
            now=now,
        )
        for pk, beat in held
    )


def image_build_append_line(*, build_id: int, line: str) -> int:
    """Append a line to a build's log, store it, and stream it; return its sequence number.

    The line is output of programs the team chose (pip's, its base image's): a NUL in it is
    stored and streamed as U+FFFD (`storable`), never a failure of the build.
    """
    line = storable_text(line.rstrip("\n"))
    with transaction.atomic():
        ImageBuild.objects.filter(pk=build_id).update(
            log=Concat(F("log"), Value(line + "\n")), line_count=F("line_count") + 1
        )
        seq = ImageBuild.objects.filter(pk=build_id).values_list("line_count", flat=True).get()
    # Stored first, then sent: a consumer that reads the log after joining the group misses
    # nothing and can drop the duplicates by sequence number.
    event: BuildLineEvent = {"type": "build.line", "build_id": build_id, "seq": seq, "line": line}
    live.group_send(live.build_group(build_id), dict(event))
    return seq


def image_build_set_status(*, build_id: int, status: str, **fields: Any) -> None:
    """Change a build's status and tell its watchers."""
    # An error's text may quote what a step wrote (`image_build_append_line`).
    fields = {k: storable_text(v) if isinstance(v, str) else v for k, v in fields.items()}
    if status in (BuildStatus.SUCCEEDED, BuildStatus.FAILED):
        fields["finished_at"] = timezone.now()
    ImageBuild.objects.filter(pk=build_id).update(status=status, **fields)
    event: BuildStatusEvent = {"type": "build.status", "build_id": build_id, "status": status}
    live.group_send(live.build_group(build_id), dict(event))


def image_build_run(
    *,
    build_id: int,
    builder_factory: BuilderFactory | None = None,
    interrupt: Interrupt | None = None,
) -> ImageBuild:
    """Run a queued build now, in this thread, streaming its log; never raises on failure.

    A fired `interrupt` (its worker is stopping) ends the build: a download or the base
    image's bootstrap is killed at once, and so is the engine's step running now; the rest
    stops at its next log line.
    """
    build = ImageBuild.objects.select_related("sandbox").get(pk=build_id)
    image_build_set_status(build_id=build_id, status=BuildStatus.BUILDING)

    def on_log(line: str) -> None:
        image_build_append_line(build_id=build_id, line=line)

    try:
        registry = registry_for_sandbox(build.sandbox)
        if builder_factory is not None:
            builder = builder_factory(registry)
        else:
            builder = sandbox_builder(build.sandbox, registry=registry)
        result = builder.ensure_image(build.sandbox.name, on_log=on_log, interrupt=interrupt)
    except Exception as exc:
        logger.warning("image build %s failed: %s", build_id, exc)
        image_build_append_line(build_id=build_id, line=f"ERROR: {exc}")
        image_build_set_status(build_id=build_id, status=BuildStatus.FAILED, error=str(exc))
    else:
        image_build_append_line(
            build_id=build_id, line=f"image {result.tag} ready ({result.seconds:.1f} s)"
        )
        wheels = getattr(result, "wheels", None)  # a test's builder may not say
        image_build_set_status(
            build_id=build_id,
            status=BuildStatus.SUCCEEDED,
            tag=result.tag,
            built=result.built,
            wheels=None if wheels is None else sorted(wheels),
            # The content this build built, read as it ran: the code may have changed since
            # it was queued, and the row must name the image it made, wheels and all.
            **_content_built(registry, build.sandbox.name),
        )
    build.refresh_from_db()
    return build
