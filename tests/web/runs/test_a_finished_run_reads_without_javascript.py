"""A finished run's page shows its events, result and status in its HTML: no socket, no script."""

from __future__ import annotations

import time

import pytest

from jazzmine_web.runs.models import RunEvent
from jazzmine_web.runs.services import run_create, run_record_event

from .html import seqs

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished_run(ecommerce, member):
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    t0 = run.created_at.timestamp()
    for seq, kind, data, after in [
        (1, "log", {"message": "reading <orders>"}, 0.004),
        (2, "intermediate", {"label": "step", "data": {"i": 1}}, 0.010),
        (3, "result", {"total": 202.25}, 1.5),
        (4, "exit", {"outcome": "result", "message": "done"}, 1.6),
    ]:
        run_record_event(run_id=run.pk, event={"seq": seq, "type": kind, "data": data,
                                               "ts": t0 + after})  # fmt: skip
    return run


def test_its_page_has_every_event_in_order_and_no_socket(client, member, finished_run) -> None:
    client.force_login(member)
    html = client.get(f"/runs/{finished_run.pk}/").content.decode()
    assert seqs(html) == [2, 4, 1]  # the timeline, then the logs
    assert "reading &lt;orders&gt;" in html  # escaped, as text
    assert '<span class="since" data-ts="' in html and ">+4 ms<" in html and ">+1.60 s<" in html
    assert 'data-format="json">{\n  &quot;total&quot;: 202.25\n}</pre>' in html
    assert 'data-run-status data-status="succeeded">Succeeded<' in html
    assert "exit: result" in html and "ws-connect" not in html
    assert "run-stream.js" not in html and "socket.js" not in html


def test_a_live_runs_page_follows_after_the_last_event_it_rendered(
    client, member, ecommerce
) -> None:
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    RunEvent.objects.create(run=run, seq=1, type="log", data={"message": "a"}, ts=time.time())
    client.force_login(member)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert f'hx-ext="ws" ws-connect="/ws/runs/{run.pk}/?after=1"' in html
    assert seqs(html) == [1]


def test_a_bash_result_shows_its_stdout(client, member, ecommerce) -> None:
    run = run_create(sandbox=ecommerce, user=member, body="echo hi\n", language="bash",
                     start=False)  # fmt: skip
    result = {"stdout": "3 orders\n", "stderr": "warn\n", "exit_code": 0, "calls": 1,
              "duration_ms": 12.4}  # fmt: skip
    run_record_event(run_id=run.pk, event={"seq": 1, "type": "result", "data": result,
                                           "ts": time.time()})  # fmt: skip
    client.force_login(member)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'data-format="text">3 orders\n</pre>' in html
    assert "stdout · exit 0 · 1 tool call(s) · 12 ms" in html
    assert "<pre data-run-result-stderr-body>warn\n</pre>" in html


def test_a_result_of_none_reads_null_as_the_api_says(client, member, ecommerce) -> None:
    # The page said `{}` where the API said `"result": null`: two answers for one run.
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(None)\n", start=False)
    t0 = run.created_at.timestamp()
    for seq, kind, data in [(1, "result", None), (2, "exit", {"outcome": "result"})]:
        run_record_event(run_id=run.pk, event={"seq": seq, "type": kind, "data": data,
                                               "ts": t0 + seq})  # fmt: skip
    client.force_login(member)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'data-format="json">null</pre>' in html and 'data-format="json">{}</pre>' not in html
