"""The sandbox page in Chromium when the worker building its image is killed and started again:
the Build button comes back by itself as the worker starts, the log says why the build ended,
and Build starts a new one at once.

Before, the page kept a disabled Build button for some 40 s after the restart (the heartbeat
timeout and a reaper's period), though the restarted worker could see its build was dead.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from tests.stalling import pips_downloading, stalled_index
from tests.waiting import wait_until
from tests.workers import worker_start

from .conftest import browser_page, login, seeded_studio_server, serve

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

GIVE_A_DEPENDENCY = """
from jazzmine_web.catalog.models import Sandbox
sandbox = Sandbox.objects.get(name="ecommerce")
sandbox.dependencies = [PACKAGE]
sandbox.save()
print(sandbox.pk)
"""


def test_build_comes_back_by_itself_when_the_killed_worker_starts_again(
    browser, tmp_path_factory
) -> None:
    package = f"jazzmine-restart-{time.time_ns()}"
    with stalled_index() as url:
        server = seeded_studio_server(
            tmp_path_factory,
            {"JAZZMINE_PIP_INDEX_URL": url, "JAZZMINE_WORKER_GRACE_SECONDS": "2"},
        )
        code = GIVE_A_DEPENDENCY.replace("PACKAGE", repr(f"{package}==1.0"))
        pk = int(server.manage("shell", "-c", code).strip().splitlines()[-1])
        with serve(server), browser_page(browser, server) as page:
            login(page, server)
            page.goto(f"{server.url}/catalog/sandboxes/{pk}/")
            page.click("#build-button")
            page.wait_for_selector("#build-button[disabled]")
            wait_until(lambda: pips_downloading(package), timeout=60, message="pip never started")
            killed = server.worker
            killed.kill()
            # Its embedded beat went with it: no process of the killed worker is left.
            leftover = subprocess.run(
                ["pgrep", "-f", "--", f"--schedule {killed.log_path.with_suffix('.beat')}$"],
                check=False,
            )
            assert leftover.returncode == 1, "the killed worker's beat outlived it"
            # A reload before the restart still shows the dead build: nothing knows yet.
            page.reload()
            assert page.locator("#build-button").is_disabled()
            server.worker = worker_start(
                env=server.env, name=killed.name, log_path=killed.log_path.with_suffix(".2.log"),
                beat=True,
            )  # fmt: skip
            try:
                # No reload: the restarted worker ends the build and the page hears it.
                page.wait_for_selector("#build-button:not([disabled])", timeout=10_000)
                log = page.locator("#build-log").inner_text()
                assert "was restarted (its previous process was killed)" in log
                assert "the build was abandoned" in log
                page.click("#build-button")
                page.wait_for_selector("#build-button[disabled]")
                wait_until(
                    lambda: pips_downloading(package), timeout=60, message="no new build began"
                )
            finally:
                server.worker.stop()  # its grace stops the new build, stalled like the first
