"""A worker started again after its process was killed ends at once what that process held.

Before, a run, a build or a trial of a SIGKILLed worker stayed `running` (or `building`) until
the reaper saw its heartbeat stop: up to the timeout plus a reap period, some 40 s, with the
sandbox's Build button waiting on the dead build all along, even though the restarted worker
could see its previous process was gone. A worker can only be sure of that on its own host:
anywhere else, or with a live process behind the recorded pid, the rows are the reaper's.
"""

from __future__ import annotations

import datetime
import os
import socket
import subprocess
import sys
import time

import docker
import pytest
from django.conf import settings
from django.utils import timezone

from jazzmine.sandbox.owner import BOOT_LABEL, OWNER_LABEL
from jazzmine_web.catalog.models import BuildStatus, ImageBuild
from jazzmine_web.catalog.services import image_build_start, script_tool_save
from jazzmine_web.runs.lifecycle import runs_reap
from jazzmine_web.runs.models import Run, RunEvent, RunStatus
from jazzmine_web.runs.services import run_create
from jazzmine_web.scripttools.models import TrialRun, TrialState
from jazzmine_web.scripttools.services import trial_start
from jazzmine_web.workers.models import Worker
from jazzmine_web.workers.services import EarlierLife, earlier_life_gone
from tests.stalling import pips_downloading, stalled_index
from tests.waiting import wait_until
from tests.web.helpers import GRACE, SPIN, until_spinning, worker_name
from tests.web.scripttools.conftest import make_tool
from tests.workers import worker_env, worker_start

HOST = socket.gethostname()
HEARTBEAT_TIMEOUT = settings.JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS


def _a_dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


@pytest.mark.parametrize(
    ("earlier", "gone"),
    [
        pytest.param(lambda: EarlierLife(HOST, _a_dead_pid()), True, id="its pid is no process's"),
        pytest.param(lambda: EarlierLife(HOST, os.getpid()), True, id="its pid is ours now"),
        pytest.param(lambda: EarlierLife(HOST, os.getppid()), False, id="its pid is alive"),
        pytest.param(lambda: EarlierLife(HOST, 1), False, id="its pid is someone else's"),
        pytest.param(lambda: EarlierLife(HOST, 0), False, id="no pid recorded"),
        pytest.param(lambda: EarlierLife("elsewhere", _a_dead_pid()), False, id="another host"),
        pytest.param(lambda: EarlierLife(HOST.upper() + ".", os.getpid()), False, id="host spelt"),
    ],
)
def test_an_earlier_life_counts_as_gone_only_when_this_host_is_sure(earlier, gone):
    assert earlier_life_gone(earlier(), hostname=HOST, pid=os.getpid()) is gone


def _boots_of(name: str) -> set[str]:
    client = docker.from_env()
    found = client.containers.list(all=True, filters={"label": f"{OWNER_LABEL}={name}"})
    return {c.labels.get(BOOT_LABEL, "") for c in found}


GRACED = {"JAZZMINE_WORKER_GRACE_SECONDS": str(GRACE)}


@pytest.fixture
def spinning(ecommerce, member, celery_workers):
    """A worker of the test's own, and a run it holds that spins until it is stopped."""
    worker = celery_workers.running(GRACED)
    run = run_create(sandbox=ecommerce, user=member, body=SPIN)
    until_spinning(run.pk)
    yield worker, run
    celery_workers.stop()  # the next test gets a worker of its own


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_a_run_of_a_killed_worker_ends_as_soon_as_it_is_started_again(
    ecommerce, member, celery_workers, spinning
):
    worker, spinning = spinning
    name = worker_name(worker)
    killed_boot = Worker.objects.get(name=name).boot
    worker.kill()
    # The same name, as a supervisor restarts it. It says it is ready once its start-up,
    # which ends the run, is over: no wait for a reaper.
    celery_workers.running(GRACED)
    spinning.refresh_from_db()
    assert (spinning.status, spinning.outcome) == (RunStatus.FAILED, "worker_lost")
    assert f"({name}) was restarted while the run went on" in spinning.message
    assert killed_boot not in _boots_of(name)  # its sandbox and pool are gone
    # The restarted worker runs the next one as ever.
    again = run_create(sandbox=ecommerce, user=member, body=SPIN)
    until_spinning(again.pk)


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_a_build_of_a_killed_worker_no_longer_blocks_build_once_it_is_started_again(
    ecommerce, member, base_image, celery_workers, tmp_path
):
    package = f"jazzmine-restarted-{time.time_ns()}"
    with stalled_index() as url:
        env = {"JAZZMINE_PIP_INDEX_URL": url, "JAZZMINE_WORKER_GRACE_SECONDS": str(GRACE),
               "JAZZMINE_CACHE_DIR": str(tmp_path), "TMPDIR": str(tmp_path)}  # fmt: skip
        worker = celery_workers.running(env)
        name = worker_name(worker)
        ecommerce.dependencies = [f"{package}==1.0"]
        ecommerce.save()
        build = image_build_start(sandbox=ecommerce, user=member)
        try:
            wait_until(lambda: pips_downloading(package), timeout=60, message="pip never started")
            worker.kill()
            # Build, pressed before the restart, still shows the dead build: nothing knows yet.
            assert image_build_start(sandbox=ecommerce, user=member).pk == build.pk
            celery_workers.running(env)
            build.refresh_from_db()
            assert build.status == BuildStatus.FAILED, build.log
            assert f"the worker building it ({name}) was restarted" in build.error
            assert f"ERROR: {build.error}; the build was abandoned" in build.log
            # Build again: a new build, which the restarted worker takes.
            again = image_build_start(sandbox=ecommerce, user=member)
            assert again.pk != build.pk
            wait_until(
                lambda: ImageBuild.objects.filter(
                    pk=again.pk, status=BuildStatus.BUILDING
                ).exists(),
                timeout=30,
                message="the restarted worker never took the new build",
            )
        finally:
            celery_workers.stop()  # its grace stops the new build, stalled on the same index


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_a_trial_of_a_killed_worker_ends_as_soon_as_it_is_started_again(
    ecommerce, member, base_image, celery_workers
):
    worker = celery_workers.running(GRACED)
    name = worker_name(worker)
    sleeper = "import time\ntime.sleep(120)\nprint('{}')\n"
    row, _ = script_tool_save(
        sandbox=ecommerce, tool=make_tool("sleeper", sleeper, timeout=300.0), author=member
    )
    trial = trial_start(tool=row, user=member)
    wait_until(
        lambda: TrialRun.objects.filter(pk=trial.pk, state=TrialState.RUNNING).exists(),
        timeout=60,
        message="the trial never started",
    )
    worker.kill()
    try:
        celery_workers.running(GRACED)
        trial.refresh_from_db()
        assert (trial.state, trial.status, trial.passed) == (
            TrialState.DONE,
            "sandbox_error",
            False,
        )
        assert f"the worker running it ({name}) was restarted" in trial.message
    finally:
        celery_workers.stop()


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "impostor",
    [
        pytest.param(lambda: {"pid": os.getpid()}, id="a live process on this host"),
        pytest.param(lambda: {"hostname": "another-host"}, id="a process on another host"),
    ],
)
def test_rows_another_process_may_hold_under_the_name_are_left_to_the_reaper(
    celery_workers, spinning, impostor
):
    # Two workers started under one name by mistake share a row: the second must not end
    # what the first, alive, holds. Here the killed worker's row says it was such a process.
    worker, spinning = spinning
    worker.kill()
    Worker.objects.filter(name=worker_name(worker)).update(**impostor())
    celery_workers.running(GRACED)
    time.sleep(1.0)  # the restart path ends what it ends before the worker is ready
    assert Run.objects.get(pk=spinning.pk).status == RunStatus.RUNNING
    # The reaper's timeout still holds for it.
    later = timezone.now() + datetime.timedelta(seconds=HEARTBEAT_TIMEOUT + 1)
    assert runs_reap(now=later)["failed"] == 1
    spinning.refresh_from_db()
    assert spinning.outcome == "worker_lost" and "stopped answering" in spinning.message


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_a_live_process_answering_to_the_name_keeps_its_run_and_its_sandbox(
    celery_workers, spinning, tmp_path
):
    # Worker A holds a run; B is started under A's name by mistake, killed, and restarted.
    # The row of the name then records B's dead pid: only asking who answers to the name
    # tells that A, alive, holds the run. Before, B's restart removed A's sandbox too.
    first, spinning = spinning
    name = worker_name(first)
    twin_env = worker_env(database_url=celery_workers.database_url, extra=GRACED)
    again = None
    try:
        twin = worker_start(env=twin_env, name=celery_workers.name, log_path=tmp_path / "b.log")
        twin.kill()
        again = worker_start(env=twin_env, name=celery_workers.name, log_path=tmp_path / "c.log")
        assert "another running process answers to this name" in again.log()
        logs = RunEvent.objects.filter(run_id=spinning.pk, type="log")
        count = logs.count()
        wait_until(lambda: logs.count() > count, timeout=10, message="A's run stopped spinning")
        assert Run.objects.get(pk=spinning.pk).status == RunStatus.RUNNING
        assert Worker.objects.get(name=name).pid == again.process.pid
    finally:
        if again is not None:
            again.stop()
