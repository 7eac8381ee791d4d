"""Celery tasks for the catalog: thin, each calls a service."""

from __future__ import annotations

from celery import shared_task

from ..studio.claims import rows_heartbeat
from ..workers.process import execute_claimed, kind_register, silence_counts
from .models import BuildStatus, ImageBuild
from .services.builds import (
    image_build_claim,
    image_build_run,
    image_builds_of_earlier_life_end,
    image_builds_reap,
)

kind_register(
    "build",
    beat=lambda *, worker, ids: rows_heartbeat(
        ImageBuild.objects.filter(pk__in=ids, status=BuildStatus.BUILDING), worker=worker
    ),
    lost=image_builds_of_earlier_life_end,
)


@shared_task(name="catalog.image_build")
def image_build(build_id: int) -> str | None:
    """Claim a queued image build and run it on this worker's Docker host."""
    return execute_claimed(
        "build",
        build_id,
        claim=lambda worker: image_build_claim(build_id=build_id, worker=worker),
        work=lambda interrupt: image_build_run(build_id=build_id, interrupt=interrupt).status,
    )


@shared_task(name="catalog.builds_reap")
def builds_reap() -> int:
    """End builds whose worker went silent, or that no worker took."""
    return image_builds_reap(judge_silence=silence_counts())
