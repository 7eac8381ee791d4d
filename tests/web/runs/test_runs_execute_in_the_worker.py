from __future__ import annotations

import pytest

from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.selectors import run_events_after
from jazzmine_web.runs.services import RunRefused, run_create

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

BODY = """\
orders = get_orders(status="delivered")
emit_intermediate("orders", {"count": len(orders.data["orders"])})
total = sum(o["price"] for o in orders.data["orders"])
emit_log(f"total is {total}")
emit_result({"total": total})
"""


def test_a_run_streams_intermediate_log_and_result_in_order(ecommerce, member, worker) -> None:
    run = run_create(sandbox=ecommerce, user=member, body=BODY, task="Total delivered orders")
    status = worker.future(run.pk).result(timeout=180)
    assert status == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert run.result == {"total": 202.25}
    assert run.outcome == "result"
    events = run_events_after(run)
    assert [e["type"] for e in events] == ["intermediate", "log", "result", "exit"]
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
    assert events[0]["data"] == {"label": "orders", "data": {"count": 2}}
    assert run.event_count == 4
    assert run.first_event_ms is not None and run.backend == "docker"


def test_a_failing_script_reports_the_body_line_and_the_traceback(
    ecommerce, member, worker
) -> None:
    body = 'r = get_orders()\nfirst = r.data[0]\nemit_result({"first": first})\n'
    run = run_create(sandbox=ecommerce, user=member, body=body)
    assert worker.future(run.pk).result(timeout=180) == RunStatus.FAILED
    run.refresh_from_db()
    assert run.outcome == "script_error"
    assert "KeyError: 0" in run.error
    assert "line 2 of the script" in run.error


def test_a_body_that_starts_with_blank_lines_keeps_its_line_numbers(
    ecommerce, member, worker
) -> None:
    # Its leading blank lines were cut from the code that ran: an error on line 6 of what was
    # sent said line 4, and the run page drew line 4 beside it.
    body = '\n\nd = {}\nx = 1\ny = 2\nv = d["nope"]\nemit_result(v)\n'
    run = run_create(sandbox=ecommerce, user=member, body=body)
    assert worker.future(run.pk).result(timeout=180) == RunStatus.FAILED
    run.refresh_from_db()
    assert "line 6 of the script" in run.error, run.error
    with pytest.raises(RunRefused) as refused:
        run_create(sandbox=ecommerce, user=member, body="\n\nimport os\nemit_result(1)\n")
    assert refused.value.violations[0].startswith("Line 3:"), refused.value.violations


def test_a_script_with_violations_never_becomes_a_run(ecommerce, member) -> None:
    with pytest.raises(RunRefused) as refused:
        run_create(sandbox=ecommerce, user=member, body="import os\nemit_result(os.environ)\n")
    assert any("import" in v for v in refused.value.violations)
    assert Run.objects.count() == 0
