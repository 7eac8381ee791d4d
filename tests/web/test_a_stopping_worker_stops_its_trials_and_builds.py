"""A stopping worker's grace covers trials and image builds as it covers runs.

Before, only runs were stopped at the end of the grace: a trial of a tool that took minutes,
or a build, kept the stopping worker alive until its supervisor killed it (honcho: after
5 s), with the trial's container still there and the row in progress until the reaper.
"""

from __future__ import annotations

import contextlib
import threading
import time

import docker
import pytest

from jazzmine.interrupts import Interrupt
from jazzmine.sandbox.workdirs import abandoned_remove
from jazzmine_web.catalog.models import BuildStatus, ImageBuild
from jazzmine_web.catalog.services import (
    image_build_run,
    image_build_start,
    sandbox_builder,
    script_tool_save,
    tool_update,
)
from jazzmine_web.scripttools.models import KeychainToken, TrialRun, TrialState
from jazzmine_web.scripttools.services import trial_start
from tests.sandbox.helpers import aged
from tests.stalling import pips_downloading, processes_naming, stalled_index
from tests.waiting import wait_until
from tests.web.helpers import GRACE, owned_containers, worker_name
from tests.web.scripttools.conftest import make_tool

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

SLEEPER = "import time\ntime.sleep(120)\nprint('{}')\n"


def test_a_trial_longer_than_the_grace_is_stopped_and_its_container_removed(
    ecommerce, member, base_image, graced
):
    row, _ = script_tool_save(
        sandbox=ecommerce, tool=make_tool("sleeper", SLEEPER, timeout=300.0), author=member
    )
    trial = trial_start(tool=row, user=member)
    wait_until(
        lambda: (
            TrialRun.objects.filter(pk=trial.pk, state=TrialState.RUNNING).exists()
            and owned_containers(graced)
        ),
        timeout=60,
        message="the trial's container never started",
    )
    asked = time.monotonic()
    assert graced.stop(timeout=30) == 0  # it exits by itself: nobody had to kill it
    took = time.monotonic() - asked
    assert GRACE <= took < GRACE + 3, f"the worker took {took:.1f} s to stop"
    trial.refresh_from_db()
    assert (trial.state, trial.status, trial.passed) == (TrialState.DONE, "sandbox_error", False)
    assert f"its worker {worker_name(graced)} stopped before the trial ended" in trial.message
    assert f"{GRACE:g} s" in trial.message
    assert trial.finished_at is not None
    assert owned_containers(graced) == []
    assert not KeychainToken.objects.filter(trial_id=trial.pk).exists()


def test_a_trial_that_ends_within_the_grace_keeps_its_result(ecommerce, member, base_image, graced):
    quick = "import time\ntime.sleep(1)\nprint('{\"ok\": true}')\n"
    row, _ = script_tool_save(sandbox=ecommerce, tool=make_tool("napper", quick), author=member)
    trial = trial_start(tool=row, user=member)
    wait_until(
        lambda: TrialRun.objects.filter(pk=trial.pk, state=TrialState.RUNNING).exists(),
        timeout=60,
    )
    assert graced.stop(timeout=30) == 0
    trial.refresh_from_db()
    assert (trial.status, trial.data) == ("valid_json", {"ok": True}), trial.message


def _fresh_build(sandbox, member) -> ImageBuild:
    """Queue a build whose image cannot exist yet: a tool changed to code never built."""
    tool = sandbox.tools.get(name="get_user")
    tool_update(tool=tool, source=tool.source.replace("Ada Lovelace", f"Ada {time.time_ns()}"))
    return image_build_start(sandbox=sandbox, user=member, background=False)


def _tag(sandbox) -> str:
    return sandbox_builder(sandbox).image_tag(sandbox.name)


def test_a_build_stopped_by_its_worker_fails_saying_why_and_makes_no_image(
    ecommerce, member, base_image
):
    build = _fresh_build(ecommerce, member)
    interrupt = Interrupt()
    reason = "its worker w1 stopped before the build ended (it gives its work 2 s)"

    def fire_once_started() -> None:
        # Once the build has said something, it is under way: its next line stops it.
        wait_until(
            lambda: ImageBuild.objects.filter(pk=build.pk).exclude(log="").exists(), timeout=60
        )
        interrupt.fire(reason)

    firing = threading.Thread(target=fire_once_started)
    firing.start()
    build = image_build_run(build_id=build.pk, interrupt=interrupt)
    firing.join()
    assert build.status == BuildStatus.FAILED, build.log
    assert build.error == reason
    assert f"ERROR: {reason}" in build.log
    assert not sandbox_builder(ecommerce).image_exists(_tag(ecommerce))
    # The next build of the same code is not blocked by the stopped one, and succeeds.
    again = image_build_start(sandbox=ecommerce, user=member, background=False)
    assert again.pk != build.pk
    try:
        again = image_build_run(build_id=again.pk)
        assert again.status == BuildStatus.SUCCEEDED, again.log
    finally:
        with contextlib.suppress(docker.errors.ImageNotFound):
            docker.from_env().images.remove(_tag(ecommerce), force=True)


def test_a_build_silent_in_a_download_is_stopped_within_the_grace(
    ecommerce, member, base_image, celery_workers
):
    # pip waits on an index that never answers: no log line comes for minutes (here pip's
    # timeout is 180 s, retried). The worker's stop must not wait for one.
    package = f"jazzmine-stalled-{time.time_ns()}"
    with stalled_index() as url:
        worker = celery_workers.running(
            {"JAZZMINE_WORKER_GRACE_SECONDS": str(GRACE), "JAZZMINE_PIP_INDEX_URL": url}
        )
        ecommerce.dependencies = [f"{package}==1.0"]
        ecommerce.save()
        build = image_build_start(sandbox=ecommerce, user=member)
        wait_until(lambda: processes_naming(package), timeout=60, message="pip never started")
        time.sleep(1.0)  # silent now: waiting on the index
        assert ImageBuild.objects.get(pk=build.pk).status == BuildStatus.BUILDING
        asked = time.monotonic()
        try:
            assert worker.stop(timeout=30) == 0  # it exits by itself: nobody had to kill it
        finally:
            celery_workers.stop()  # the next test gets a worker of its own
        took = time.monotonic() - asked
    assert GRACE <= took < GRACE + 3, f"the worker took {took:.1f} s to stop"
    build.refresh_from_db()
    assert build.status == BuildStatus.FAILED, build.log
    assert f"its worker {worker_name(worker)} stopped before the build ended" in build.error
    assert f"ERROR: {build.error}" in build.log
    assert f"pip download {package}==1.0" in build.log  # how far it got
    wait_until(lambda: not processes_naming(package), timeout=5, message="pip outlived it")


def test_a_worker_killed_in_a_download_takes_pip_with_it(
    ecommerce, member, base_image, celery_workers, tmp_path
):
    # SIGKILL (the OOM killer, an operator's kill -9): the worker cleans nothing up, and
    # pip used to wait on the index for minutes after it, tied to no one.
    package = f"jazzmine-orphan-{time.time_ns()}"

    with stalled_index() as url:
        # Its cache and its image contexts in this test's directory: what the killed worker
        # leaves is this test's to look at, not the machine's.
        worker = celery_workers.running(
            {"JAZZMINE_PIP_INDEX_URL": url, "JAZZMINE_CACHE_DIR": str(tmp_path),
             "TMPDIR": str(tmp_path)}
        )  # fmt: skip
        ecommerce.dependencies = [f"{package}==1.0"]
        ecommerce.save()
        build = image_build_start(sandbox=ecommerce, user=member)
        try:
            wait_until(lambda: pips_downloading(package), timeout=60, message="pip never started")
            time.sleep(1.5)  # silent now, waiting on the index
            worker.kill()
            killed = time.monotonic()
        finally:
            celery_workers.stop()  # the next test gets a worker of its own
        wait_until(
            lambda: not pips_downloading(package), timeout=3, message="pip outlived its worker"
        )
        assert time.monotonic() - killed < 3
    # Its half-made download is left (nothing of the worker ran), and held by no one: the
    # next build that downloads removes it once it is past the moment of its creation.
    (context,) = tmp_path.glob("jazzmine-build-*")  # left too, and swept the same way
    (left,) = (tmp_path / "wheels").glob("download-*")
    assert abandoned_remove("download-", parent=left.parent) == []  # made a moment ago
    aged(left)
    assert abandoned_remove("download-", parent=left.parent) == [left]
    aged(context)
    assert abandoned_remove("jazzmine-build-", parent=tmp_path) == [context]
    assert ImageBuild.objects.get(pk=build.pk).status == BuildStatus.BUILDING  # the reaper's
