"""The playground loop works the second time round: generate, run, retry, generate again, auto."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from jazzmine_web.playground.models import PlaygroundSession
from tests.web.helpers import collect_until, playground_socket

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]


async def run_body(ws, *, sandbox: int, session: str, attempt: dict, task: str) -> dict:
    await ws.send_json_to(
        {
            "type": "run",
            "sandbox": sandbox,
            "session": session,
            "task": task,
            "body": attempt["body"],
            "attempt_id": attempt["attempt_id"],
        }
    )
    while True:
        message = await ws.receive_json_from(timeout=120)
        assert message["type"] != "error", message
        if message["type"] == "status" and message.get("status") in ("succeeded", "failed"):
            return message


async def test_generate_run_retry_and_auto_all_work_on_one_session_and_after_a_reconnect(
    ecommerce, trusted, member, llm, worker
) -> None:
    task = "Show the first order"
    ws = await playground_socket(member)
    try:
        await ws.send_json_to({"type": "generate", "sandbox": ecommerce.pk, "task": task})
        messages = await collect_until(ws, "generation_finished")
        session = next(m for m in messages if m["type"] == "session")["session"]
        first = next(m for m in messages if m["type"] == "generated")

        # Generate a second time in the same session (this used to drop the socket).
        await ws.send_json_to(
            {"type": "generate", "sandbox": ecommerce.pk, "task": task, "session": session}
        )
        messages = await collect_until(ws, "generation_finished")
        assert next(m for m in messages if m["type"] == "session")["session"] == session
        second = next(m for m in messages if m["type"] == "generated")
        assert second["attempt_id"] != first["attempt_id"]
        assert 'results["first"] = r.data[0]' in second["body"]  # the classic mistake

        finished = await run_body(
            ws, sandbox=ecommerce.pk, session=session, attempt=second, task=task
        )
        assert finished["status"] == "failed"

        # Retry: the prompt carries the error and the fix comes back.
        await ws.send_json_to(
            {
                "type": "generate",
                "sandbox": ecommerce.pk,
                "task": task,
                "session": session,
                "retry": True,
            }
        )
        messages = await collect_until(ws, "generation_finished")
        retried = next(m for m in messages if m["type"] == "generated")
        assert "first = value[0]" in retried["body"] and "r.data[0]" not in retried["body"]
        finished = await run_body(
            ws, sandbox=ecommerce.pk, session=session, attempt=retried, task=task
        )
        assert finished["status"] == "succeeded"
    finally:
        await ws.disconnect()

    # A reloaded page: a new socket, the same session, Auto goes again.
    ws = await playground_socket(member)
    try:
        await ws.send_json_to(
            {
                "type": "auto",
                "sandbox": ecommerce.pk,
                "task": task,
                "session": session,
                "max_attempts": 3,
            }
        )
        messages = await collect_until(ws, "finished", timeout=180)
        assert messages[-1]["type"] == "finished" and messages[-1]["success"] is True
    finally:
        await ws.disconnect()
    count = await database_sync_to_async(
        lambda: PlaygroundSession.objects.get(pk=session).attempts.count()
    )()
    assert count >= 4
