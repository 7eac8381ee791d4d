"""The run page in Chromium: the timeline counts from the run's start, and a bash result reads
as its stdout (pretty JSON when it is JSON), not as an escaped JSON string."""

from __future__ import annotations

import json
import re

import pytest

from .conftest import login

pytestmark = pytest.mark.e2e

# A bash run that timed out after 20 s: its first event came 5 ms after the run was created.
MAKE_RUN = """
from django.contrib.auth import get_user_model
from jazzmine_web.catalog.models import Sandbox
from jazzmine_web.runs.models import Run, RunEvent
run = Run.objects.create(
    sandbox=Sandbox.objects.get(name="ecommerce"),
    created_by=get_user_model().objects.get(username="demo"),
    language="bash", body="get_orders | jq .", script="get_orders | jq .",
    code_sha256="0" * 64, status="failed", outcome="timeout",
)
t0 = run.created_at.timestamp()
stdout = STDOUT
result = {"stdout": stdout, "stderr": "jq: warning\\n", "exit_code": 124,
          "duration_ms": 20000.0, "calls": 1}
try:
    result["json"] = json.loads(stdout)
except ValueError:
    pass
RunEvent.objects.create(run=run, seq=1, type="intermediate", ts=t0 + 0.005,
                        data={"label": "$ get_orders (ok, 3 ms)", "data": {"name": "get_orders"}})
RunEvent.objects.create(run=run, seq=2, type="result", ts=t0 + 19.9, data=result)
RunEvent.objects.create(run=run, seq=3, type="exit", ts=t0 + 20.0,
                        data={"outcome": "timeout", "message": "timed out after 20 s"})
print(run.pk)
"""


def make_run(studio_server, stdout: str) -> str:
    code = "import json\n" + MAKE_RUN.replace("STDOUT", repr(stdout))
    return studio_server.manage("shell", "-c", code).strip().splitlines()[-1]


def open_run(page, studio_server, run_id: str) -> None:
    login(page, studio_server)
    page.goto(f"{studio_server.url}/runs/{run_id}/")
    page.wait_for_selector("[data-run-timeline] li.exit")


def test_the_timeline_counts_from_the_runs_start_not_its_first_event(page, studio_server) -> None:
    open_run(page, studio_server, make_run(studio_server, '{"orders": 3}\n'))
    labels = page.locator("[data-run-timeline] .since").all_inner_texts()
    assert labels == ["+5 ms", "+20.0 s"]


def test_a_bash_result_shows_its_json_stdout_pretty_printed(page, studio_server) -> None:
    stdout = '{"orders": 3, "ids": ["o-1", "o-2"]}\n'
    open_run(page, studio_server, make_run(studio_server, stdout))
    body = page.locator("[data-run-result-body]")
    assert body.get_attribute("data-format") == "json"
    assert body.inner_text() == json.dumps(json.loads(stdout), indent=2)
    assert '\\"' not in body.inner_text() and "stdout" not in body.inner_text()
    meta = page.locator("[data-run-result-meta]").inner_text()
    assert "stdout, as JSON" in meta and "exit 124" in meta and "1 tool call(s)" in meta
    assert page.locator("[data-run-result-stderr-body]").text_content().strip() == "jq: warning"


def test_a_bash_result_that_is_not_json_shows_as_plain_text(page, studio_server) -> None:
    open_run(page, studio_server, make_run(studio_server, "3 orders\nlast: o-2\n"))
    body = page.locator("[data-run-result-body]")
    assert body.get_attribute("data-format") == "text"
    assert body.inner_text().rstrip("\n") == "3 orders\nlast: o-2"
    assert re.match(r"^stdout · exit 124", page.locator("[data-run-result-meta]").inner_text())
