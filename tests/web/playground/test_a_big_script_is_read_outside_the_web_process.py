"""The playground reads a big script (a member's Run, an LLM's answer) in the checker process.

The editor's live check already went there; a Run did not: its script was assembled and
validated (three parses) on the socket's database thread, in the web process. Nor did an
LLM's answer in Generate and Auto: it was read (three parses) on a thread of the web process,
then read again as its run was made. `ast.parse` holds the GIL for its whole run, so each
stalled every socket of the process, anyone's: a 190 KB answer, most of a second. A checker
process that dies, or takes too long, ends what was asked with a clear error, and nothing
of it is stored: the script is never read in the web process instead.
"""

from __future__ import annotations

import asyncio
import os
import signal

import pytest
from channels.db import database_sync_to_async

from jazzmine.llm.fake.server import Reply
from jazzmine_web.playground.models import Attempt
from jazzmine_web.reviews.models import ReviewPolicy
from jazzmine_web.studio import checker
from tests.web.checker import (
    ANSWER,
    PING_BOUND,
    PLAYGROUND,
    ReaderWatch,
    parse_seconds,
    pinging,
    reader_busy,
)
from tests.web.helpers import collect_until, playground_rows, playground_socket, still_answering
from tests.web.reviews.conftest import set_policy

pytestmark = [pytest.mark.django_db(transaction=True)]

SMALL = "orders = get_orders(status='delivered')\nemit_result(len(orders.data['orders']))\n"


def _run(sandbox, body: str, **extra) -> dict:
    return {"type": "run", "sandbox": sandbox.pk, "task": "Count", "body": body, **extra}


def test_the_scripts_take_far_longer_to_read_than_a_ping_may() -> None:
    # Else the bounds below prove nothing: the script must be slow to read in one process.
    assert min(parse_seconds(PLAYGROUND), parse_seconds(ANSWER)) > 1.5 * PING_BOUND


async def test_a_big_run_leaves_every_other_socket_answering(ecommerce, member) -> None:
    page, other = await playground_socket(member), await playground_socket(member)
    try:
        await page.send_json_to(_run(ecommerce, SMALL))  # the first of the process: imports
        await collect_until(page, "run_created", timeout=60)
        watch = ReaderWatch()
        async with pinging(other) as pings:
            await page.send_json_to(_run(ecommerce, PLAYGROUND))
            await collect_until(page, "run_created", timeout=60)
    finally:
        await page.disconnect()
        await other.disconnect()
    assert pings.longest < PING_BOUND, f"a ping waited {pings.longest:.3f} s for the reading"
    assert watch.busy(), "no process under the web process read the script: it was read in it"


async def test_a_big_answer_in_the_auto_loop_leaves_every_other_socket_answering(
    ecommerce, member, llm
) -> None:
    await database_sync_to_async(set_policy)(ecommerce, ReviewPolicy.NEVER)
    # The stream holds its last word until the pings have started: what is measured is the
    # reading of the answer and the making of its run, not the LLM's connection.
    last_word = asyncio.Event()
    llm.script(SMALL, Reply(text=ANSWER, release_last=last_word))
    page, other = await playground_socket(member), await playground_socket(member)
    auto = {"type": "auto", "sandbox": ecommerce.pk, "task": "Count", "max_attempts": 1}
    try:
        await page.send_json_to(auto)  # the first of the process: imports
        await collect_until(page, "run_created", timeout=60)
        await page.send_json_to(auto)
        await collect_until(page, "token", timeout=60)
        watch = ReaderWatch()
        async with pinging(other) as pings:
            # The answer is read (three parses), then read again as its run is made.
            last_word.set()
            messages = await collect_until(page, "run_created", timeout=120)
    finally:
        await page.disconnect()
        await other.disconnect()
    assert next(m for m in messages if m["type"] == "validated")["violations"] == []
    assert pings.longest < PING_BOUND, f"a ping waited {pings.longest:.3f} s for the reading"
    assert watch.busy(), "no process under the web process read the answer: it was read in it"


async def test_a_killed_checker_refuses_the_run_and_stores_nothing(ecommerce, member) -> None:
    page = await playground_socket(member)
    try:
        await page.send_json_to(_run(ecommerce, SMALL))
        first = (await collect_until(page, "run_created", timeout=60))[-1]
        before = await playground_rows()

        watch = ReaderWatch()
        await page.send_json_to(_run(ecommerce, PLAYGROUND, session=first["session"]))
        os.kill(await reader_busy(watch), signal.SIGKILL)
        reply = await page.receive_json_from(timeout=60)
        while reply["type"] in ("run_pane", "run_html", "status"):  # the first run's stream
            reply = await page.receive_json_from(timeout=60)

        assert reply["type"] == "error", reply
        assert "could not be checked" in reply["message"] and "killed" in reply["message"]
        # Neither its attempt nor a run was stored; the first attempt and its run are kept.
        assert await playground_rows() == before
        assert await database_sync_to_async(Attempt.objects.filter(run__isnull=False).count)() == 1
        await still_answering(page, ecommerce)
    finally:
        await page.disconnect()


async def test_an_answer_the_checker_cannot_read_in_time_ends_the_loop_unrecorded(
    ecommerce, member, llm, monkeypatch
) -> None:
    monkeypatch.setattr(checker, "CHECK_TIMEOUT_SECONDS", 0.01)
    llm.script(ANSWER)
    page = await playground_socket(member)
    try:
        await page.send_json_to({"type": "generate", "sandbox": ecommerce.pk, "task": "Count"})
        reply = await page.receive_json_from(timeout=60)
        while reply["type"] in ("session", "generation_started", "attempt_started", "token"):
            reply = await page.receive_json_from(timeout=60)
    finally:
        await page.disconnect()
    assert reply["type"] == "error", reply
    assert reply["message"].startswith("The script could not be checked: reading it took longer")
    assert not await database_sync_to_async(Attempt.objects.exists)()


async def test_a_paste_the_checker_cannot_read_in_time_is_shown_unchecked(
    ecommerce, member, monkeypatch
) -> None:
    monkeypatch.setattr(checker, "CHECK_TIMEOUT_SECONDS", 0.01)
    page = await playground_socket(member)
    body = PLAYGROUND.replace("a0 =", "a0 = '<b>' and")
    try:
        await page.send_json_to(
            {"type": "validate", "version": 3, "sandbox": ecommerce.pk, "body": body}
        )
        reply = await page.receive_json_from(timeout=60)
    finally:
        await page.disconnect()
    assert reply["type"] == "validation" and reply["version"] == 3
    assert [v["line"] for v in reply["violations"]] == [None]
    assert "could not be checked" in reply["violations"][0]["message"]
    assert reply["html"] is None  # the editor keeps the plain text it shows (escaped there)
