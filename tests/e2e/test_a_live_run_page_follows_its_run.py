"""A live run's page in Chromium: events arrive over htmx's ws extension as the server renders
them, each once and in order, and a reload (mid-run or after) shows them all from the HTML."""

from __future__ import annotations

import pytest

from .conftest import login

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

# Slow enough that the page is open before the first event, and reloaded before the last.
BODY = """\
time.sleep(1.5)
for i in range(6):
    emit_intermediate("step", {"i": i})
    emit_log("line " + str(i))
    time.sleep(0.4)
emit_result({"steps": 6})
"""

START_RUN = """
from django.contrib.auth import get_user_model
from jazzmine_web.catalog.models import Sandbox
from jazzmine_web.runs.services import run_create
run = run_create(sandbox=Sandbox.objects.get(name="ecommerce"),
                 user=get_user_model().objects.get(username="demo"), body=BODY)
print(run.pk)
"""

SEQS = "[...document.querySelectorAll('[data-run-output] li[data-seq]')].map(e => +e.dataset.seq)"
# 6 intermediates and 6 logs (1..12), the result (13), then the exit (14).
EXPECTED = [*range(1, 13), 14]


def start_run(studio_server) -> str:
    code = START_RUN.replace("BODY", repr(BODY))
    return studio_server.manage("shell", "-c", code).strip().splitlines()[-1]


def test_a_live_runs_events_arrive_and_a_reload_shows_them_all(page, studio_server) -> None:
    login(page, studio_server)
    run_id = start_run(studio_server)
    page.goto(f"{studio_server.url}/runs/{run_id}/")
    pane = page.locator(f"#run-output-{run_id}")
    after = int(pane.get_attribute("data-run-seq"))
    assert pane.get_attribute("ws-connect") == f"/ws/runs/{run_id}/?after={after}"
    page.evaluate("window.__notReloaded = true")
    page.locator(f"#run-{run_id}-timeline-live li.intermediate").first.wait_for(timeout=120_000)
    assert page.evaluate("window.__notReloaded") is True  # it came over the socket

    page.reload()  # mid-run: what was stored is in the HTML, the rest follows after it
    rendered = int(pane.get_attribute("data-run-seq"))
    assert 0 < rendered < 14
    assert page.locator("form[data-run-cancel]").count() == 1  # its author may stop it
    page.locator("[data-run-status].status-succeeded").wait_for(timeout=120_000)
    # Ended: its Cancel goes (it sat outside the pane, and pressing it did nothing).
    page.locator("form[data-run-cancel]").wait_for(state="detached", timeout=5_000)
    page.locator("[data-run-result]:not([hidden])").wait_for()
    seqs = page.evaluate(SEQS)
    assert sorted(seqs) == EXPECTED  # each once, none lost
    timeline = page.evaluate(
        "[...document.querySelectorAll('[data-run-timeline] li')].map(e => +e.dataset.seq)"
    )
    assert timeline == sorted(timeline)  # in order
    assert '"steps": 6' in page.locator("[data-run-result-body]").inner_text()

    page.reload()  # finished: everything from the HTML, no socket
    assert pane.get_attribute("ws-connect") is None
    assert sorted(page.evaluate(SEQS)) == EXPECTED
    assert page.locator("[data-run-status]").get_attribute("data-status") == "succeeded"
    assert "line 5" in page.locator("[data-run-logs]").inner_text()
