"""A run ended from outside (a lost worker) says why once in its pane, live and on a reload.

`run_fail` stores the reason as an error (shown in the Error region) and as the exit's
message (the run's message, in its head, and what the API reads). The exit's line in the
timeline said it once more: three times on one page. It now says the outcome only when the
Error region shows the same reason; a sandbox's own exit with a message of its own keeps it.
"""

from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from jazzmine.sandbox import Outcome
from jazzmine_web.asgi import application
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create, run_fail, run_record_event, run_set_status
from tests.web.helpers import ws_headers

from .html import receive_until_finished

REASON = "the worker w1@host stopped answering (no heartbeat for 31 s); its sandbox was removed"
EXIT_LINE = re.compile(r'<li class="exit outcome-(\w+)"[^>]*>.*?</li>', re.S)


def started(ecommerce, member) -> Run:
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    run_set_status(run_id=run.pk, status=RunStatus.RUNNING, backend="docker", image="img:1")
    return run


def page(run: Run, member) -> str:
    client = Client()
    client.force_login(member)
    answer = client.get(f"/runs/{run.pk}/")
    assert answer.status_code == 200
    return answer.content.decode()


def pane(html: str) -> str:
    (section,) = re.findall(r'<section class="run-output".*?</section>', html, re.S)
    return section


def exit_line(html: str) -> str:
    (line,) = [m[0] for m in EXIT_LINE.finditer(html)]
    return line


@pytest.mark.django_db
def test_a_reload_shows_the_reason_in_the_head_and_the_error_region_only(ecommerce, member):
    run = started(ecommerce, member)
    run_fail(run_id=run.pk, outcome=Outcome.WORKER_LOST, message=REASON)
    html = page(run, member)
    assert html.count(REASON) == 2  # the head (the run's message) and the Error region
    assert re.search(r"data-run-message>" + re.escape(REASON), html)
    assert re.search(r"data-run-error-body>" + re.escape(REASON), html)
    line = exit_line(html)
    assert "exit: worker_lost" in line and REASON not in line
    assert pane(page(run, member)) == pane(html)  # twice in a row, the same


@pytest.mark.django_db
def test_a_sandboxs_own_exit_message_stays_on_its_line(ecommerce, member):
    run = started(ecommerce, member)
    data = {"outcome": "timeout", "message": "timed out after 30 s", "backend": "docker"}
    run_record_event(run_id=run.pk, event={"seq": 1, "type": "exit", "data": data, "ts": 1.0})
    assert "timed out after 30 s" in exit_line(page(run, member))


@pytest.mark.django_db
def test_an_error_unlike_the_exits_message_leaves_both_said(ecommerce, member):
    run = started(ecommerce, member)
    events = [
        {"seq": 1, "type": "error", "data": {"message": "ValueError: bad"}, "ts": 1.0},
        {"seq": 2, "type": "exit", "data": {"outcome": "error", "message": "the script raised"},
         "ts": 1.0},
    ]  # fmt: skip
    for event in events:
        run_record_event(run_id=run.pk, event=event)
    html = page(run, member)
    assert "the script raised" in exit_line(html) and "ValueError: bad" in html


@pytest.mark.django_db(transaction=True)
async def test_a_watcher_sees_the_reason_once_as_it_happens(ecommerce, member):
    run = await database_sync_to_async(started)(ecommerce, member)
    ws = WebsocketCommunicator(
        application, f"/ws/runs/{run.pk}/", headers=await database_sync_to_async(ws_headers)(member)
    )
    connected, _ = await ws.connect()
    assert connected
    try:
        await database_sync_to_async(run_fail)(
            run_id=run.pk, outcome=Outcome.WORKER_LOST, message=REASON
        )
        fragments, final = await receive_until_finished(ws)
    finally:
        await ws.disconnect()
    assert final == RunStatus.FAILED
    html = "".join(fragments)
    line = exit_line(html)
    assert "exit: worker_lost" in line and REASON not in line
    assert re.search(r"data-run-error-body>" + re.escape(REASON), html)
