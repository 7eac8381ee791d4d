"""A zip bomb among a sandbox's dependencies fails its build, saying which wheel, which limit
and which setting, wherever the build happens: the Build button, or a run of either backend.

The operator's limits come from the deployment settings (`JAZZMINE_MAX_WHEEL_BYTES` here);
before, nothing read any such setting and the 64 MiB of zeros inside a 65 KiB wheel went into
the image, or into every bubblewrap run's directory. The failure is the build's or the run's
(`build_failed`), never a server error or a dead worker, and no image is made.
"""

from __future__ import annotations

import zipfile

import docker.errors
import pytest

from jazzmine_web.catalog.models import BuildStatus
from jazzmine_web.catalog.services import (
    image_build_run,
    image_build_start,
    sandbox_builder,
    sandbox_update,
)
from jazzmine_web.runs.executor import RunExecutor
from jazzmine_web.runs.models import RunStatus
from jazzmine_web.runs.services import run_create
from tests.hostile_wheels import ZEROS, write_index

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

WHEEL = "jzzeros-1.0-py3-none-any.whl"
SAYS = (WHEEL, "JAZZMINE_MAX_WHEEL_BYTES", "16,777,216 bytes")


@pytest.fixture
def bombed(ecommerce, admin, tmp_path, monkeypatch, settings, docker_client, base_image):
    """The demo sandbox depending on `jzzeros` (64 MiB of zeros, deflated), a 16 MiB limit."""
    files = {"jzzeros/zeros.bin": ZEROS}
    url = write_index(tmp_path / "index", {"jzzeros": {"1.0": files}},
                      compression=zipfile.ZIP_DEFLATED)  # fmt: skip
    monkeypatch.setenv("JAZZMINE_CACHE_DIR", str(tmp_path / "cache"))
    settings.JAZZMINE_PIP_INDEX_URL = url
    settings.JAZZMINE_MAX_WHEEL_BYTES = 16 * 1024 * 1024
    sandbox_update(sandbox=ecommerce, actor=admin, dependencies=["jzzeros==1.0"])
    yield ecommerce
    tag = sandbox_builder(ecommerce).image_tag(ecommerce.name)
    try:
        docker_client.images.remove(tag, force=True)
    except docker.errors.ImageNotFound:
        pass


def no_image(sandbox, docker_client) -> bool:
    try:
        docker_client.images.get(sandbox_builder(sandbox).image_tag(sandbox.name))
    except docker.errors.ImageNotFound:
        return True
    return False


def test_the_build_button_fails_the_build_and_the_page_says_why(
    bombed, member, client, docker_client
):
    started = image_build_start(sandbox=bombed, user=member, background=False)
    build = image_build_run(build_id=started.pk)
    assert build.status == BuildStatus.FAILED, build.log
    assert all(phrase in build.error for phrase in SAYS), build.error
    assert "ERROR: build failed at install dependencies" in build.log
    assert no_image(bombed, docker_client)
    client.force_login(member)
    page = client.get(f"/catalog/sandboxes/{bombed.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert '<span id="build-status">Failed</span>' in html
    assert all(phrase in html for phrase in SAYS)  # the log the page shows ends with the error


@pytest.mark.parametrize("backend", ["docker", "bwrap"])
def test_a_run_fails_as_a_failed_build_and_the_worker_goes_on(
    backend, bombed, member, docker_client
):
    bombed.backend = backend
    bombed.save(update_fields=["backend"])
    executor = RunExecutor(pool_size=0)
    try:
        executor.learn_images()
        run = run_create(sandbox=bombed, user=member, body="emit_result(1)\n", start=False)
        assert executor.submit(run.pk, worker="w1@test").result(timeout=300) == RunStatus.FAILED
        # The same worker takes the next run: nothing of the first is in its way.
        again = run_create(sandbox=bombed, user=member, body="emit_result(2)\n", start=False)
        assert executor.submit(again.pk, worker="w1@test").result(timeout=300) == RunStatus.FAILED
    finally:
        executor.shutdown()
    for each in (run, again):
        each.refresh_from_db()
        assert each.outcome == "build_failed", (each.outcome, each.message)
        assert all(phrase in each.message for phrase in SAYS), each.message
    assert no_image(bombed, docker_client)
