"""A generation that ends before the LLM's answer (Cancel, a reload, a newer request) is kept.

It is an attempt of its own, "stopped", with its prompt, what the LLM had sent and why it
stopped; it has no script, so nothing runs it as the LLM's, and a retry quotes the attempt
before it, as though it had never started.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.urls import reverse

from jazzmine.llm.fake.server import Reply
from jazzmine_web.playground.consumers import (
    STOPPED_BY_CANCEL,
    STOPPED_BY_LEAVING,
    STOPPED_BY_NEWER,
)
from jazzmine_web.playground.models import Attempt, PlaygroundSession
from jazzmine_web.playground.services import prompt_for
from tests.web.helpers import collect_until, playground_socket

pytestmark = pytest.mark.django_db(transaction=True)

ANSWER = "```python\norders = get_orders()\nemit_result({'n': len(orders.data['orders'])})\n```"


def held_reply() -> Reply:
    """An answer whose last token never comes: the generation is cut short mid-answer."""
    return Reply(text=ANSWER, release_last=asyncio.Event())


async def tokens_then(ws, count: int) -> tuple[str, str]:
    """Read a generation's first `count` tokens; return its session and the text so far."""
    session, text, seen = "", "", 0
    while seen < count:
        message = await ws.receive_json_from(timeout=10)
        assert message["type"] != "error", message
        if message["type"] == "generation_started":
            session = message["session"]
        if message["type"] == "token":
            text += message["text"]
            seen += 1
    return session, text


def generate(sandbox: Any, **more: Any) -> dict[str, Any]:
    """Return the page's Generate message for the task "Count orders"."""
    return {"type": "generate", "sandbox": sandbox.pk, "task": "Count orders", **more}


@contextlib.asynccontextmanager
async def held_generation(
    llm: Any, user: Any, sandbox: Any, *then: Any, tokens: int = 2, **more: Any
) -> AsyncIterator[tuple[Any, str, str]]:
    """Start a generation whose answer is held before its end (then the replies `then`).

    Yields the page's socket, its session and the answer's first `tokens` tokens; the answer
    is let go and the page closed on the way out.
    """
    reply = held_reply()
    llm.script(reply, *then)
    ws = await playground_socket(user)
    try:
        await ws.send_json_to(generate(sandbox, **more))
        session, so_far = await tokens_then(ws, tokens)
        yield ws, session, so_far
    finally:
        reply.release_last.set()
        await ws.disconnect()


def attempts_of(session_id: str) -> list[Attempt]:
    return list(Attempt.objects.filter(session_id=session_id).order_by("number"))


async def stored(session_id: str, count: int) -> list[Attempt]:
    """Wait (a page that went away is answered by no message) for the session's attempts."""
    for _ in range(100):
        found = await database_sync_to_async(attempts_of)(session_id)
        if len(found) >= count:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"{count} attempt(s) were never stored: {found}")


async def test_cancel_keeps_the_prompt_and_the_answer_so_far(ecommerce, member, llm) -> None:
    async with held_generation(llm, member, ecommerce, tokens=3) as (ws, session, so_far):
        await ws.send_json_to({"type": "cancel"})
        messages = await collect_until(ws, "cancelled", timeout=10)
    assert not [m for m in messages if m["type"] == "generated"]
    (attempt,) = await stored(session, 1)
    assert attempt.stopped == STOPPED_BY_CANCEL and attempt.status == "stopped"
    assert attempt.raw_answer.startswith(so_far) and ANSWER.startswith(attempt.raw_answer)
    assert len(attempt.raw_answer) < len(ANSWER)
    assert attempt.body == "" and attempt.run_id is None and attempt.error_text == ""
    assert "Count orders" in attempt.prompt and attempt.source == "llm"
    assert attempt.generation_seconds > 0 and attempt.first_token_seconds is not None


async def test_a_reload_mid_answer_keeps_it(ecommerce, member, llm) -> None:
    reply = held_reply()
    llm.script(reply)
    ws = await playground_socket(member)
    try:
        await ws.send_json_to(generate(ecommerce))
        session, so_far = await tokens_then(ws, 2)
    finally:
        await ws.disconnect()  # the page goes away: nobody is told anything
    try:
        (attempt,) = await stored(session, 1)
    finally:
        reply.release_last.set()
    assert attempt.stopped == STOPPED_BY_LEAVING
    assert attempt.raw_answer.startswith(so_far) and "Count orders" in attempt.prompt


async def test_a_newer_generate_replaces_it_and_both_are_numbered(ecommerce, member, llm) -> None:
    async with held_generation(llm, member, ecommerce, ANSWER) as (ws, session, _):
        await ws.send_json_to(generate(ecommerce, session=session))
        messages = await collect_until(ws, "generation_finished", timeout=20)
    first, second = await stored(session, 2)
    # Told by the list's number (the loop's own count started at 1 again).
    said = {m["type"]: (m["attempt"], m.get("number")) for m in messages if "attempt" in m}
    assert said["generated"] == said["validated"] == (1, 2)
    assert (first.number, first.stopped, first.body) == (1, STOPPED_BY_NEWER, "")
    assert (second.number, second.stopped, second.status) == (2, "", "drafted")
    assert second.body.startswith("orders = get_orders()")


async def test_a_retry_quotes_the_attempt_before_the_stopped_one(ecommerce, member, llm) -> None:
    def failed_attempt() -> str:
        session = PlaygroundSession.objects.create(
            user=member, sandbox=ecommerce, task="Count orders"
        )
        Attempt.objects.create(
            session=session,
            number=1,
            body="import os",
            violations=["Line 1: import of 'os' is not allowed"],
        )
        return str(session.pk)

    session = await database_sync_to_async(failed_attempt)()
    retry = {"session": session, "retry": True}
    async with held_generation(llm, member, ecommerce, ANSWER, **retry) as (ws, _, _):
        await ws.send_json_to({"type": "cancel"})
        await collect_until(ws, "cancelled", timeout=10)
        await ws.send_json_to(generate(ecommerce, **retry))
        messages = await collect_until(ws, "generation_finished", timeout=20)
    _failed, stopped, retried = await stored(session, 3)
    assert stopped.stopped == STOPPED_BY_CANCEL
    assert stopped.previous_error == retried.previous_error != ""
    assert "import of 'os' is not allowed" in retried.previous_error
    started = next(m for m in messages if m["type"] == "attempt_started")
    assert "import os" in started["prompt"]
    # What the page shows as the next prompt quotes the failed attempt too.
    view = await database_sync_to_async(
        lambda: prompt_for(
            sandbox=ecommerce,
            task="Count orders",
            session=PlaygroundSession.objects.get(pk=session),
            retry=True,
            before=3,
        )
    )()
    assert view.previous_script == "import os" and view.attempt == 2


async def test_a_cancel_with_nothing_generating_stores_nothing(ecommerce, member, llm) -> None:
    llm.script(ANSWER)
    ws = await playground_socket(member)
    try:
        await ws.send_json_to(generate(ecommerce))
        messages = await collect_until(ws, "generation_finished", timeout=20)
        await ws.send_json_to({"type": "cancel"})
        await ws.send_json_to({"type": "cancel"})
        await asyncio.sleep(0.3)
    finally:
        await ws.disconnect()
    session = next(m for m in messages if m["type"] == "generation_started")["session"]
    (attempt,) = await database_sync_to_async(attempts_of)(session)
    assert attempt.stopped == "" and attempt.status == "drafted"


async def test_its_script_cannot_be_run_as_the_llms(ecommerce, member, llm) -> None:
    async with held_generation(llm, member, ecommerce) as (ws, session, _):
        await ws.send_json_to({"type": "cancel"})
        await collect_until(ws, "cancelled", timeout=10)
        (attempt,) = await stored(session, 1)
        run = {"type": "run", "session": session, "attempt_id": attempt.pk, "body": ""}
        await ws.send_json_to({**generate(ecommerce), **run})
        refused = await ws.receive_json_from(timeout=10)
    assert refused == {"type": "error", "message": "there is no script to run"}
    assert [a.number for a in await database_sync_to_async(attempts_of)(session)] == [1]


async def test_the_pages_show_why_it_stopped_and_what_had_come(
    ecommerce, member, llm, client
) -> None:
    async with held_generation(llm, member, ecommerce, ANSWER, tokens=3) as (ws, session, _):
        await ws.send_json_to({"type": "cancel"})
        await collect_until(ws, "cancelled", timeout=10)
        await ws.send_json_to(generate(ecommerce, session=session))
        await collect_until(ws, "generation_finished", timeout=20)
    stopped, _second = await stored(session, 2)

    def pages() -> tuple[str, str]:
        client.force_login(member)
        index = client.get(reverse("playground:index"), {"session": session})
        compare = client.get(reverse("playground:compare", args=[session]), {"a": 1, "b": 2})
        assert index.status_code == compare.status_code == 200
        return index.content.decode(), compare.content.decode()

    index, compare = await database_sync_to_async(pages)()
    assert f'class="badge status-stopped" title="{STOPPED_BY_CANCEL}">Stopped<' in index
    assert "(first " in index  # the time to the first token, for both attempts
    assert f"Stopped: {STOPPED_BY_CANCEL}" in compare
    assert "No script: the generation stopped before the LLM finished" in compare
    assert f"no script: the generation stopped before the LLM finished ({STOPPED_BY_CANCEL})" in (
        compare
    )
    assert "get_orders" in stopped.raw_answer and "orders = get_orders()" in compare


async def test_a_page_watching_the_session_hears_of_it(ecommerce, member, llm) -> None:
    # The reloaded page, rendered before the old page's socket closed: it watches the session
    # and is told when the old socket stores the stopped generation.
    reply = held_reply()
    llm.script(reply)
    old = await playground_socket(member)
    await old.send_json_to(generate(ecommerce))
    session, _ = await tokens_then(old, 2)
    new = await playground_socket(member)
    try:
        await new.send_json_to({"type": "watch", "session": session})
        assert await new.receive_json_from(timeout=5) == {"type": "watching", "session": session}
        await old.disconnect()
        told = await new.receive_json_from(timeout=5)
        assert told == {"type": "attempts_changed", "session": session}
        (attempt,) = await database_sync_to_async(attempts_of)(session)
        assert attempt.stopped == STOPPED_BY_LEAVING
    finally:
        reply.release_last.set()
        await new.disconnect()


@pytest.mark.parametrize(
    "session", ["", "nope", 7, None, "00000000-0000-0000-0000-000000000000", "theirs"]
)
async def test_only_ones_own_session_can_be_watched(
    ecommerce, member, django_user_model, session
) -> None:
    def theirs() -> str:
        other = django_user_model.objects.create_user(username="mallory", password="x" * 12)
        return str(PlaygroundSession.objects.create(user=other, sandbox=ecommerce, task="t").pk)

    if session == "theirs":
        session = await database_sync_to_async(theirs)()
    ws = await playground_socket(member)
    try:
        await ws.send_json_to({"type": "watch", "session": session})
        answer = await ws.receive_json_from(timeout=5)
    finally:
        await ws.disconnect()
    assert answer == {"type": "error", "message": "that playground session is not one of yours"}
