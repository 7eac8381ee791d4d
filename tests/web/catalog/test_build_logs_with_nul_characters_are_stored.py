"""A build whose steps write NUL characters ends as the build did, its log kept, NUL as U+FFFD.

A build's log is the output of programs the team chose (its base image's, pip's): PostgreSQL
holds no NUL in text, so the line with one could not be appended there and a good build was
failed for it. Here the base image's python3 writes a NUL to stderr whenever it runs, as the
build's own step (compiling the harness) runs it: a real engine's build log carries it.
"""

from __future__ import annotations

import contextlib
import io
import tarfile

import docker.errors
import pytest

from jazzmine.core.tools.registry import DEFAULT_BASE_IMAGE
from jazzmine_web.catalog.models import BuildStatus
from jazzmine_web.catalog.services import image_build_run, image_build_start, sandbox_update
from jazzmine_web.catalog.services.images import sandbox_builder

pytestmark = [pytest.mark.docker, pytest.mark.django_db]

NOISY = "jazzmine-test/nul-python:1"
WRAPPER = "#!/bin/sh\nprintf 'note: a\\000b\\n' >&2\nexec /usr/bin/python3 \"$@\"\n"
DOCKERFILE = (
    f"FROM {DEFAULT_BASE_IMAGE}\n"
    "COPY python3 /usr/local/bin/python3\n"
    "RUN chmod 755 /usr/local/bin/python3\n"
)
R = "\ufffd"  # what a NUL is stored and shown as


def _context() -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, text in (("Dockerfile", DOCKERFILE), ("python3", WRAPPER)):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    return buffer


@pytest.fixture(scope="module")
def noisy_base(docker_client, base_image):
    """A base image whose python3 writes a NUL to stderr each time it runs."""
    docker_client.images.build(fileobj=_context(), custom_context=True, tag=NOISY, rm=True)
    yield NOISY
    docker_client.images.remove(NOISY, force=True)


def _removed(docker_client, tag: str) -> None:
    with contextlib.suppress(docker.errors.ImageNotFound):
        docker_client.images.remove(tag, force=True)


def test_a_build_with_a_nul_in_its_log_succeeds_with_its_log_kept(
    ecommerce, member, noisy_base, settings, docker_client
) -> None:
    settings.JAZZMINE_BASE_IMAGES = [DEFAULT_BASE_IMAGE, noisy_base]
    sandbox_update(sandbox=ecommerce, base_image=noisy_base)
    tag = sandbox_builder(ecommerce).image_tag(ecommerce.name)
    _removed(docker_client, tag)  # built by an earlier session: this one must build it
    build = image_build_start(sandbox=ecommerce, user=member, background=False)
    try:
        build = image_build_run(build_id=build.pk)
        assert build.status == BuildStatus.SUCCEEDED, build.log
        assert f"note: a{R}b" in build.log, build.log  # (the engine colours stderr's lines)
        assert build.line_count == len(build.log.splitlines())
    finally:
        _removed(docker_client, tag)
