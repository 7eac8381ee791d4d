"""A worker knows which sandbox images its engine holds.

As it starts it asks the engine once, so the first run of a sandbox after a restart starts at
once (its claim stores RUNNING). A run whose image another worker made meanwhile finds it
there and says nothing of a build. An image the operator no longer lists is never run, made
or not.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings

from jazzmine.sandbox.builder import DERIVED_FROM_LABEL
from jazzmine.sandbox.docker_runner import POOL_LABEL
from jazzmine.sandbox.owner import DEPLOYMENT_LABEL
from jazzmine_web.catalog.services import sandbox_builder, tool_update
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create, run_group, run_start
from tests.waiting import wait_until
from tests.workers import Workers, runs_stop_unfinished

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

BODY = "emit_result(1)\n"


def image_made(sandbox) -> str:
    """Make the sandbox's current image here, as another worker on the engine would."""
    builder = sandbox_builder(sandbox)
    return builder.ensure_image(sandbox.name).tag


def image_only_this_test_has(sandbox) -> str:
    """Give the sandbox code no image was ever made of, and make that image."""
    tool = sandbox.tools.get(name="get_user")
    before = image_made(sandbox)
    tool_update(tool=tool, source=tool.source.replace("Ada Lovelace", f"Ada {uuid.uuid4().hex}"))
    made = image_made(sandbox)
    assert made != before  # the code changed, so the image does
    return made


@pytest.fixture
def restarted_worker(celery_workers, transactional_db):
    """A worker started for this test alone (its own environment makes it a new process)."""
    yield Workers(celery_workers.running({"JAZZMINE_TEST_BOOT": uuid.uuid4().hex}))
    runs_stop_unfinished()


def test_the_first_run_after_a_restart_starts_at_once(
    ecommerce, member, base_image, celery_workers, transactional_db
):
    tag = image_made(ecommerce)  # the engine holds the image before the worker starts
    for _ in range(2):  # each restart forgets what the worker knew, and asks again
        worker = Workers(celery_workers.running({"JAZZMINE_TEST_BOOT": uuid.uuid4().hex}))
        assert "sandbox image(s)" in worker.log()
        run = run_create(sandbox=ecommerce, user=member, body=BODY)
        assert worker.future(run.pk).result(timeout=180) == RunStatus.SUCCEEDED
        run.refresh_from_db()
        # Stored RUNNING in its claim: no second write, no PREPARING while the engine answers.
        # What a failure needs to be told apart: another image, or the same one not known.
        seen = (run.image, tag, run.message, [line for line in worker.log().splitlines()
                if "image" in line][-5:])  # fmt: skip
        assert run.image == tag, seen
        assert run.started_at == run.claimed_at is not None, seen
    runs_stop_unfinished()


async def statuses_until_running(run: Run, *, timeout: float = 180) -> list[tuple[str, str]]:
    """Start a queued run and collect the statuses its watchers hear until RUNNING."""
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(run_group(run.pk), channel)
    heard: list[tuple[str, str]] = []
    try:
        await database_sync_to_async(run_start)(run=run)
        async with asyncio.timeout(timeout):
            while not heard or heard[-1][0] not in (RunStatus.RUNNING, *RunStatus.finished()):
                message = await layer.receive(channel)
                if message["type"] == "run.status":
                    heard.append((message["status"], message["message"]))
    finally:
        await layer.group_discard(run_group(run.pk), channel)
    return heard


async def test_an_image_another_worker_made_is_not_built_again(
    ecommerce, member, base_image, restarted_worker
):
    tag = await sync_to_async(image_only_this_test_has)(ecommerce)
    run = await database_sync_to_async(run_create)(
        sandbox=ecommerce, user=member, body=BODY, start=False
    )
    heard = await statuses_until_running(run)
    assert heard[-1][0] == RunStatus.RUNNING, heard
    assert ("preparing", "building image") not in heard, heard
    status = await sync_to_async(restarted_worker.future(run.pk).result)(timeout=180)
    assert status == RunStatus.SUCCEEDED
    stored = await Run.objects.aget(pk=run.pk)
    assert stored.image == tag and stored.message != "building image"


def image_removed(client, tag: str) -> None:
    """Remove an image by hand, as an operator's prune would (its bash images first)."""
    for child in client.images.list(filters={"label": f"{DERIVED_FROM_LABEL}={tag}"}):
        client.images.remove(child.id, force=True)
    client.images.remove(tag, force=True)  # forced: the worker's idle sandboxes still use it


def test_an_image_removed_under_a_worker_that_knew_it_is_made_again(
    ecommerce, member, base_image, docker_client, restarted_worker
):
    tag = image_made(ecommerce)
    first = run_create(sandbox=ecommerce, user=member, body=BODY)
    assert restarted_worker.future(first.pk).result(timeout=180) == RunStatus.SUCCEEDED
    image_removed(docker_client, tag)
    # Warm runs while the pool's sandboxes last, then runs that start afresh, then bash,
    # which builds its own image on the sandbox's: none fails for the image that went away.
    runs = [("python", BODY)] * 4 + [("bash", "echo hi\n")] * 2
    for language, body in runs:
        run = run_create(sandbox=ecommerce, user=member, body=body, language=language)
        status = restarted_worker.future(run.pk).result(timeout=300)
        run.refresh_from_db()
        assert status == RunStatus.SUCCEEDED, (language, run.outcome, run.message, run.error)
    assert docker_client.images.get(tag)  # made again


def idle_sandboxes(client) -> list[str]:
    """Return the ids of this deployment's warm-pool containers on the engine.

    Only this test session's deployment: another on the same engine (`scripts/run.sh` beside
    the suite) has pools of its own, which a test must neither count nor kill.
    From the engine's one list, not `containers.list`, which asks for each container in
    turn: one removed in between (a run's sandbox once it ended) made it fail with NotFound.
    """
    ours = f"{DEPLOYMENT_LABEL}={settings.JAZZMINE_DEPLOYMENT}"
    return [
        c["Id"]
        for c in client.api.containers(filters={"label": [POOL_LABEL, ours]})
        if (c.get("Labels") or {}).get(POOL_LABEL) != "none"
    ]


def pool_steady(client, *, size: int) -> None:
    """Wait until the pool holds `size` ready sandboxes and has nothing on the way.

    After a run its sandbox is removed and another started: both carry the pool's label for
    a while, so the same `size` sandboxes must be there for a second.
    """
    seen: list[set[str]] = []

    def steady() -> bool:
        seen.append(set(idle_sandboxes(client)))
        return len(seen) > 10 and len(seen[-1]) == size and all(s == seen[-1] for s in seen[-10:])

    wait_until(steady, timeout=60)


def test_a_run_whose_image_went_away_as_its_sandbox_started_makes_it_and_runs(
    ecommerce, member, base_image, docker_client, restarted_worker
):
    tag = image_made(ecommerce)
    first = run_create(sandbox=ecommerce, user=member, body=BODY)
    assert restarted_worker.future(first.pk).result(timeout=180) == RunStatus.SUCCEEDED
    pool_steady(docker_client, size=2)
    # The pool's ready sandboxes vouch for the image, but none can serve a run any more
    # (they died idle), and the image went away with them: the run's own sandbox cannot
    # start, as when another run takes the last ready one while a prune removes the image.
    image_removed(docker_client, tag)
    for container in idle_sandboxes(docker_client):
        docker_client.api.kill(container)
    time.sleep(0.5)  # the worker sees their streams end
    run = run_create(sandbox=ecommerce, user=member, body=BODY)
    status = restarted_worker.future(run.pk).result(timeout=300)
    run.refresh_from_db()
    assert status == RunStatus.SUCCEEDED, (run.outcome, run.message, run.error)
    assert docker_client.images.get(tag)  # made again
    assert run.warm is False  # it waited for the image


def test_an_image_of_an_unlisted_base_is_not_run_though_it_exists(
    ecommerce, member, base_image, celery_workers, transactional_db
):
    image_made(ecommerce)
    # The operator narrowed the list after the image was made (as a restart with it would).
    worker = Workers(celery_workers.running({"JAZZMINE_BASE_IMAGES": "corp/python:3.11"}))
    try:
        run = run_create(sandbox=ecommerce, user=member, body=BODY)
        assert worker.future(run.pk).result(timeout=180) == RunStatus.FAILED
        run.refresh_from_db()
        assert run.outcome == "build_failed", (run.outcome, run.message)
        assert "not on the operator's list" in run.message
        assert run.first_event_ms is None  # the sandbox never started
    finally:
        runs_stop_unfinished()


def test_a_worker_whose_engine_is_down_starts_and_says_so_on_each_run(
    ecommerce, member, celery_workers, transactional_db, tmp_path
):
    # Docker not started yet, or its socket moved: the worker must still come up.
    worker = Workers(celery_workers.running({"DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"}))
    try:
        assert "could not list the Docker engine's sandbox images" in worker.log()
        for language, body in [("python", BODY), ("bash", "echo hi\n"), ("python", BODY)]:
            run = run_create(sandbox=ecommerce, user=member, body=body, language=language)
            assert worker.future(run.pk).result(timeout=60) == RunStatus.FAILED
            run.refresh_from_db()
            assert run.outcome == "engine_unavailable", (run.outcome, run.message)
            # Says which engine, for the operator who moved it.
            assert run.message.startswith(f"Docker engine unavailable at unix://{tmp_path}/")
            assert run.first_event_ms is None
    finally:
        runs_stop_unfinished()


class EngineProxy:
    """A socket in front of the machine's Docker engine that the test can take away."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(16)
        self.open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return  # closed: the engine is gone
            engine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            engine.connect("/var/run/docker.sock")
            self.open += [client, engine]
            for a, b in ((client, engine), (engine, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, target: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                target.sendall(data)
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)

    def take_away(self) -> None:
        self.server.close()
        self.path.unlink()
        for sock in self.open:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


def test_an_engine_gone_from_under_a_worker_ends_each_run_saying_so(
    ecommerce, member, base_image, celery_workers, transactional_db
):
    path = Path(tempfile.mkdtemp()) / "docker.sock"  # short: a socket path has 107 bytes
    proxy = EngineProxy(path)
    image_made(ecommerce)
    worker = Workers(celery_workers.running({"DOCKER_HOST": f"unix://{path}"}))
    try:
        assert "sandbox image(s)" in worker.log()  # it knew the image when the engine went
        proxy.take_away()
        for language, body in [("bash", "echo hi\n"), ("python", BODY), ("bash", "echo hi\n")]:
            run = run_create(sandbox=ecommerce, user=member, body=body, language=language)
            assert worker.future(run.pk).result(timeout=120) == RunStatus.FAILED
            run.refresh_from_db()
            assert run.outcome == "engine_unavailable", (language, run.outcome, run.message)
            assert f"unix://{path}" in run.message, run.message
    finally:
        runs_stop_unfinished()
        celery_workers.stop()  # its pool's containers went with the engine's socket


def test_a_worker_counts_only_its_own_deployments_images(ecommerce, base_image, docker_client):
    # Its start says how many images it found: another deployment's on the same engine are
    # none of its own (a team saw 22 for a deployment that had made 2).
    from jazzmine.sandbox.builder import KEYED_REPOSITORY_PREFIX, sandbox_image_tags
    from jazzmine_web.runs.executor import RunExecutor

    tag = image_made(ecommerce)
    foreign = f"{KEYED_REPOSITORY_PREFIX}another-deployment-{uuid.uuid4().hex[:8]}"
    docker_client.images.get(tag).tag(foreign, "x")
    executor = RunExecutor(pool_size=0)
    try:
        counted = executor.learn_images()
        ours = f"{KEYED_REPOSITORY_PREFIX}{settings.JAZZMINE_DEPLOYMENT}-"
        everyone = sandbox_image_tags(docker_client)
        assert f"{foreign}:x" in everyone
        assert counted == sum(t.startswith(ours) for t in everyone) >= 1
        assert counted < len(everyone)
    finally:
        executor.shutdown()
        docker_client.images.remove(f"{foreign}:x")
