"""A run page open while the run waits in the queue shows, in Chromium and without a reload, what
the worker refused the run as it prepared it (here: a tool it was let through for that no longer
counts as always allowed), and a reload shows the same note once."""

from __future__ import annotations

import pytest

from .conftest import login
from .waiting import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

# Let through for `get_orders` (not always allowed in the demo): the worker drops the tool.
CREATE_QUEUED = """
from django.contrib.auth import get_user_model
from jazzmine_web.catalog.models import Sandbox
from jazzmine_web.runs.services import run_create
run = run_create(sandbox=Sandbox.objects.get(name="ecommerce"),
                 user=get_user_model().objects.get(username="demo"),
                 body="emit_result({'ok': True})\\n", start=False,
                 allowed_tools={"get_orders": "0" * 64})
print(run.pk)
"""
START = """
from jazzmine_web.runs.models import Run
from jazzmine_web.runs.services import run_start
run_start(run=Run.objects.get(pk="RUN_ID"))
"""
NOTES = "[...document.querySelectorAll('[data-run-note]')].map(e => e.innerText)"


def test_a_note_written_as_the_run_starts_appears_on_the_open_page(page, studio_server) -> None:
    login(page, studio_server)
    run_id = studio_server.manage("shell", "-c", CREATE_QUEUED).strip().splitlines()[-1]
    page.goto(f"{studio_server.url}/runs/{run_id}/")
    page.wait_for_selector(f"#run-output-{run_id} [data-run-status][data-status=queued]")
    assert page.evaluate(NOTES) == []
    page.evaluate("window.__notReloaded = true")

    studio_server.manage("shell", "-c", START.replace("RUN_ID", run_id))
    wait_until(page, "document.querySelectorAll('[data-run-note]').length > 0", timeout=120_000)
    assert page.evaluate("window.__notReloaded") is True  # it came over the socket
    [note] = page.evaluate(NOTES)
    assert "get_orders" in note and "need a person's approval, refused in this run" in note
    page.locator("[data-run-status].status-succeeded").wait_for(timeout=120_000)
    assert page.evaluate(NOTES) == [note]  # the end's status leaves it in place

    page.reload()
    assert page.evaluate(NOTES) == [note]
