"""A page that shows a big script colours it in the checker process, not in the web process.

Pygments is pure Python: a 190,000-character script took a thread of the web process about
two seconds, and meanwhile every other socket of that process waited its turn for the GIL
(0.1 s a ping). A big text is now coloured where a big script is parsed; one the checker
cannot colour (out of time, killed), or too long to be worth it, is shown plain and escaped:
colour is no reason to refuse a page.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from channels.db import database_sync_to_async

from jazzmine_web.runs.services import run_create, script_assemble
from jazzmine_web.studio import checker, highlighting
from tests.web.checker import (
    PING_BOUND,
    PLAYGROUND,
    ReaderWatch,
    asgi_request,
    browser_headers,
    pinging,
    reader_busy,
)
from tests.web.helpers import playground_socket

pytestmark = [pytest.mark.django_db(transaction=True)]

# The script shows a comparison, which the page must escape whether coloured or not.
SCRIPT = PLAYGROUND.replace("a0 = [", "a0 = ['<b>' < 'x', ", 1)


@database_sync_to_async
def _run(ecommerce, member) -> str:
    return str(run_create(sandbox=ecommerce, user=member, body=SCRIPT, start=False).pk)


async def _page(member, run_id: str) -> tuple[int, str]:
    headers = await database_sync_to_async(browser_headers)(member)
    status, page = await asgi_request("GET", f"/runs/{run_id}/", b"", headers)
    return status, page.decode()


def test_colouring_the_script_takes_far_longer_than_a_ping_may() -> None:
    started = time.perf_counter()
    highlighting.highlighted_html(SCRIPT, "python", True, ())
    assert time.perf_counter() - started > 3 * PING_BOUND


async def test_a_run_page_of_a_big_script_leaves_every_other_socket_answering(
    ecommerce, member
) -> None:
    run_id = await _run(ecommerce, member)
    other = await playground_socket(member)
    watch = ReaderWatch()
    try:
        async with pinging(other) as pings:
            status, page = await _page(member, run_id)
    finally:
        await other.disconnect()
    assert status == 200
    assert """<span class="s1">'&lt;b&gt;'</span>""" in page  # coloured, and escaped
    assert "<b>" not in page
    assert 'class="linenos"' in page
    assert pings.longest < PING_BOUND, f"a ping waited {pings.longest:.3f} s for the page"
    assert watch.busy(), "no process under the web process coloured the script: it was in it"


async def test_a_script_the_checker_cannot_colour_is_shown_plain(
    ecommerce, member, monkeypatch
) -> None:
    run_id = await _run(ecommerce, member)
    monkeypatch.setattr(checker, "CHECK_TIMEOUT_SECONDS", 0.01)
    status, page = await _page(member, run_id)
    assert status == 200
    assert "'&lt;b&gt;' &lt; 'x'" in page and "<b>" not in page  # plain, and escaped
    assert "orders = get_orders(status='delivered')" in page
    monkeypatch.undo()
    # Too long to be worth colouring: plain at once, asking the checker nothing.
    monkeypatch.setattr(highlighting, "PLAIN_ABOVE_CHARS", 1_000)
    watch = ReaderWatch()
    status, page = await _page(member, run_id)
    assert status == 200
    assert "'&lt;b&gt;' &lt; 'x'" in page and "<b>" not in page
    assert not watch.busy()


async def test_a_script_check_does_not_wait_behind_a_page_being_coloured(ecommerce) -> None:
    # Colouring has a process of its own: a run's or a save's check of a big script waited in
    # line behind a page's seconds of colour, its 30 s bound counting the wait.
    await asyncio.to_thread(script_assemble, sandbox=ecommerce, body=SCRIPT)  # both started
    await asyncio.to_thread(highlighting.highlight_code, SCRIPT[:30_000], "python")
    watch = ReaderWatch()
    colouring = asyncio.create_task(
        asyncio.to_thread(highlighting.highlight_code, SCRIPT, "python", linenos=True)
    )
    await reader_busy(watch)
    started = time.perf_counter()
    script, violations = await asyncio.to_thread(script_assemble, sandbox=ecommerce, body=SCRIPT)
    checked_in = time.perf_counter() - started
    assert not colouring.done(), f"the check ({checked_in:.2f} s) waited for the colouring"
    assert violations == [] and "orders = get_orders(status='delivered')" in script
    assert 'class="linenos"' in await colouring
