"""Trial runs (Gate 6) through the web layer: each row of the spec's result table."""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from jazzmine_web.catalog.services import script_tool_save
from jazzmine_web.scripttools.models import TrialRun
from tests.waiting import wait_until

from .conftest import make_tool, run_trial

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

READ = 'import json, sys\nargs = json.loads(sys.stdin.read() or "{}")\n'


def _row(sandbox, member, name, source, **fields):
    row, _ = script_tool_save(
        sandbox=sandbox, tool=make_tool(name, source, **fields), author=member
    )
    return row


@pytest.mark.parametrize(
    ("source", "status", "passed"),
    [
        (READ + 'print(json.dumps({"echo": args}))\n', "valid_json", True),
        (READ + 'print("hello", args)\n', "non_json", False),
        (READ + "pass\n", "empty", False),
        (READ + 'print("bad input", file=sys.stderr)\nsys.exit(3)\n', "script_error", False),
        ("import requests\n", "missing_module", False),
    ],
    ids=["valid-json", "non-json", "empty", "script-error", "missing-module"],
)
def test_a_trial_is_classified_like_the_spec_table(
    sandbox, member, base_image, source, status, passed
) -> None:
    trial = run_trial(_row(sandbox, member, "probe", source), {"x": 1}, user=member)
    assert trial.status == status
    assert trial.passed is passed
    assert trial.state == "done" and trial.duration_ms > 0


def test_a_valid_trial_keeps_exit_code_stdout_and_parsed_data(sandbox, member, base_image) -> None:
    row = _row(sandbox, member, "echo", READ + 'print(json.dumps({"echo": args}))\n')
    trial = run_trial(row, {"word": "hi"})
    assert trial.exit_code == 0
    assert trial.data == {"echo": {"word": "hi"}}
    assert trial.stdout.strip() == '{"echo": {"word": "hi"}}'


def test_a_script_error_keeps_its_stderr_and_exit_code(sandbox, member, base_image) -> None:
    row = _row(sandbox, member, "fail", READ + 'print("bad input", file=sys.stderr)\nsys.exit(3)\n')
    trial = run_trial(row)
    assert trial.exit_code == 3
    assert trial.message == "script error: bad input"


def test_a_script_that_runs_too_long_is_killed_as_a_timeout(sandbox, member, base_image) -> None:
    row = _row(sandbox, member, "stall", "import time\ntime.sleep(30)\n", timeout=1.0)
    trial = run_trial(row)
    assert trial.status == "timeout"
    assert trial.duration_ms < 15_000


def test_a_node_tool_passes_its_trial_in_the_base_image(sandbox, member, base_image) -> None:
    source = (
        'let input = "";\n'
        'process.stdin.on("data", (chunk) => (input += chunk));\n'
        'process.stdin.on("end", () => {\n'
        '  const args = JSON.parse(input || "{}");\n'
        '  process.stdout.write(JSON.stringify({ok: true, twice: (args.n || 0) * 2, from: "node"}));\n'
        "});\n"
    )
    trial = run_trial(_row(sandbox, member, "js_double", source, runtime="node"), {"n": 21})
    assert trial.status == "valid_json", trial.message
    assert trial.passed and trial.data == {"ok": True, "twice": 42, "from": "node"}


def test_the_page_starts_a_trial_in_a_worker_and_polls_its_result(
    client, member, sandbox, base_image
) -> None:
    row = _row(sandbox, member, "echo", READ + 'print(json.dumps({"n": args.get("n")}))\n',
               parameters={"type": "object", "properties": {"n": {"type": "integer",
               "description": "A number to echo back, e.g. 3.", "default": 3}}})  # fmt: skip
    client.force_login(member)
    page = client.get(reverse("catalog:tool", args=[row.pk])).content.decode()
    assert 'name="arg-n"' in page and 'value="3"' in page
    started = time.monotonic()
    response = client.post(
        reverse("scripttools:trial-create", args=[row.pk]), {"arg-n": "7"}, HTTP_HX_REQUEST="true"
    )
    # The request only queues it: the result arrives by polling.
    assert time.monotonic() - started < 2.0
    assert response.status_code == 200
    trial = TrialRun.objects.get(tool=row)
    assert trial.args == {"n": 7}
    assert 'hx-trigger="every 1s"' in response.content.decode()
    url = reverse("scripttools:trial", args=[row.pk, trial.pk])
    polled: list[str] = []

    def finished() -> bool:
        polled.append(client.get(url, HTTP_HX_REQUEST="true").content.decode())
        return 'data-trial-status="valid_json"' in polled[-1]

    wait_until(
        finished,
        timeout=60,
        interval=0.3,
        message=lambda: f"the trial never finished: {polled[-1]}",
    )
    body = polled[-1]
    assert "every 1s" not in body
    assert "&quot;n&quot;: 7" in body  # stdout pretty-printed as JSON
    assert 'id="publish-state" hx-swap-oob="true"' in body


def test_trial_arguments_that_do_not_fit_the_schema_are_refused(client, member, rsi_row) -> None:
    client.force_login(member)
    response = client.post(
        reverse("scripttools:trial-create", args=[rsi_row.pk]),
        {"arg-symbol": "", "arg-period": "many", "arg-signal": '"label"'},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 422
    assert not TrialRun.objects.exists()
