from __future__ import annotations

import pytest
from django.conf import settings

from jazzmine_web.catalog.models import BuildStatus, ImageBuild
from jazzmine_web.catalog.selectors import ImageStatus, sandbox_image_status, tool_image_sandboxes
from jazzmine_web.catalog.services import image_build_run, image_build_start, tool_update

pytestmark = pytest.mark.django_db


class FailingBuilder:
    def __init__(self, registry) -> None:
        pass

    def ensure_image(self, name, *, on_log, interrupt=None):
        on_log("Step 1/3 : FROM nowhere")
        raise RuntimeError("build failed at Step 1/3: no such image")


def test_a_failed_build_keeps_its_log_and_says_failed(ecommerce, member) -> None:
    build = image_build_start(sandbox=ecommerce, user=member, background=False)
    assert sandbox_image_status(ecommerce).code == ImageStatus.BUILDING
    build = image_build_run(build_id=build.pk, builder_factory=FailingBuilder)
    assert build.status == BuildStatus.FAILED
    assert "Step 1/3 : FROM nowhere" in build.log and "ERROR: build failed" in build.log
    assert sandbox_image_status(ecommerce).code == ImageStatus.FAILED


def test_a_running_build_is_reused_not_doubled(ecommerce, member) -> None:
    first = image_build_start(sandbox=ecommerce, user=member, background=False)
    assert image_build_start(sandbox=ecommerce, user=member, background=False) == first


def test_the_build_button_answers_with_the_image_status_partial(client, member, ecommerce) -> None:
    client.force_login(member)
    # In this test's transaction the build is never handed to a worker: it stays queued.
    response = client.post(f"/catalog/sandboxes/{ecommerce.pk}/build/", HTTP_HX_REQUEST="true")
    html = response.content.decode()
    build = ecommerce.builds.get()
    assert html.lstrip().startswith('<section class="card" id="image-status">')
    assert f'ws-connect="/ws/builds/{build.pk}/"' in html
    assert "badge-building" in html


@pytest.mark.docker
def test_a_real_build_makes_the_image_up_to_date_until_the_code_changes(ecommerce, member) -> None:
    build = image_build_start(sandbox=ecommerce, user=member, background=False)
    build = image_build_run(build_id=build.pk)
    assert build.status == BuildStatus.SUCCEEDED, build.log
    assert build.tag.startswith(f"jazzmine/sandbox/{settings.JAZZMINE_DEPLOYMENT}-{ecommerce.pk}:")
    assert sandbox_image_status(ecommerce).code == ImageStatus.UP_TO_DATE
    tool = ecommerce.tools.get(name="get_user")
    assert tool_image_sandboxes(tool) == [ecommerce]
    tool_update(tool=tool, source=tool.source.replace("Ada Lovelace", "Ada King"))
    assert sandbox_image_status(ecommerce).code == ImageStatus.NEEDS_REBUILD
    assert tool_image_sandboxes(tool) == []


def test_a_build_whose_worker_went_silent_never_blocks_build(ecommerce, member) -> None:
    import datetime

    from django.utils import timezone

    stuck = image_build_start(sandbox=ecommerce, user=member, background=False)
    long_ago = timezone.now() - datetime.timedelta(minutes=5)
    ImageBuild.objects.filter(pk=stuck.pk).update(
        status=BuildStatus.BUILDING, worker="gone@host", heartbeat_at=long_ago
    )
    fresh = image_build_start(sandbox=ecommerce, user=member, background=False)
    assert fresh.pk != stuck.pk
    stuck.refresh_from_db()
    assert stuck.status == BuildStatus.FAILED
    assert "gone@host" in stuck.error and "stopped answering" in stuck.error
    assert "abandoned" in stuck.log


def test_a_build_no_worker_took_is_replaced_and_a_live_one_is_reused(ecommerce, member) -> None:
    import datetime

    from django.utils import timezone

    live = image_build_start(sandbox=ecommerce, user=member, background=False)
    ImageBuild.objects.filter(pk=live.pk).update(
        status=BuildStatus.BUILDING, worker="w@host", heartbeat_at=timezone.now()
    )
    assert image_build_start(sandbox=ecommerce, user=member, background=False) == live
    ImageBuild.objects.filter(pk=live.pk).update(status=BuildStatus.SUCCEEDED)
    queued = image_build_start(sandbox=ecommerce, user=member, background=False)
    ImageBuild.objects.filter(pk=queued.pk).update(
        created_at=timezone.now() - datetime.timedelta(minutes=5)
    )
    assert image_build_start(sandbox=ecommerce, user=member, background=False) != queued
    queued.refresh_from_db()
    assert queued.status == BuildStatus.FAILED and "no worker took it" in queued.error
