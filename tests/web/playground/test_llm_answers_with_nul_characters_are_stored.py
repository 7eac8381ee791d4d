"""An LLM's answer with NUL characters is stored as an attempt, each NUL as U+FFFD; so is any
finish_reason the endpoint sends, cut to its column.

The answer is the LLM's output, kept as a record: never refused, never lost. PostgreSQL holds
no NUL in text, so storing the attempt raised there and the generation ended in an error with
nothing stored. The validator still reads the script as the LLM wrote it (a NUL is a
violation), so the loop retries with that reason; the browser is sent the text that is stored.
"""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from jazzmine.llm.fake.server import Reply
from jazzmine_web.playground.models import Attempt, PlaygroundSession
from tests.web.helpers import collect_until, playground_socket

pytestmark = [pytest.mark.django_db(transaction=True)]

R = "\ufffd"  # what a NUL is stored and shown as
ANSWER = "```python\nemit_result('a\x00b')\n```"


async def test_a_generated_answer_with_a_nul_is_stored_and_shown_alike(
    ecommerce, member, llm
) -> None:
    llm.script(Reply(text=ANSWER, finish_reason="st\x00op"))
    ws = await playground_socket(member)
    try:
        await ws.send_json_to({"type": "generate", "sandbox": ecommerce.pk, "task": "Say ab"})
        messages = await collect_until(ws, "generation_finished", timeout=30)
    finally:
        await ws.disconnect()
    generated = next(m for m in messages if m["type"] == "generated")
    attempt = await database_sync_to_async(Attempt.objects.get)(pk=generated["attempt_id"])
    assert attempt.raw_answer == ANSWER.replace("\x00", R)
    assert attempt.body == generated["body"] == f"emit_result('a{R}b')"
    assert attempt.finish_reason == generated["finish_reason"] == f"st{R}op"
    tokens = "".join(m["text"] for m in messages if m["type"] == "token")
    assert tokens == attempt.raw_answer  # what the editor showed live is what a reload shows
    validated = next(m for m in messages if m["type"] == "validated")
    assert any("NUL" in v for v in validated["violations"])
    assert attempt.violations == validated["violations"]


@pytest.mark.docker
async def test_auto_retries_after_an_answer_with_a_nul(
    ecommerce, trusted, member, llm, worker
) -> None:
    llm.script(ANSWER, "```python\nemit_result('ab')\n```")
    ws = await playground_socket(member)
    try:
        await ws.send_json_to(
            {"type": "auto", "sandbox": ecommerce.pk, "task": "Say ab", "max_attempts": 2}
        )
        messages = await collect_until(ws, "finished", timeout=180)
    finally:
        await ws.disconnect()
    assert messages[-1] == {"type": "finished", "success": True, "attempts": 2}
    session_id = next(m for m in messages if m["type"] == "session")["session"]
    attempts = await database_sync_to_async(
        lambda: list(PlaygroundSession.objects.get(pk=session_id).attempts.select_related("run"))
    )()
    assert [a.body for a in attempts] == [f"emit_result('a{R}b')", "emit_result('ab')"]
    assert attempts[0].run is None and any("NUL" in v for v in attempts[0].violations)
    # The retry prompt quotes the script and its violation; stored, its NUL reads as U+FFFD.
    assert "NUL" in attempts[1].prompt and f"emit_result('a{R}b')" in attempts[1].prompt
    assert attempts[1].run.status == "succeeded" and attempts[1].run.result == "ab"


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("stop", "stop"),
        ("x" * 200, "x" * 39 + "…"),  # longer than its column: PostgreSQL refused the attempt
        ({"why": "y" * 60}, '{"why": "' + "y" * 30 + "…"),
        (7, "7"),
    ],
    ids=["a word", "a long text", "an object", "a number"],
)
async def test_any_finish_reason_an_endpoint_sends_is_stored_and_shown_alike(
    ecommerce, member, llm, sent, kept
) -> None:
    llm.script(Reply(text="```python\nemit_result(1)\n```", finish_reason=sent))
    ws = await playground_socket(member)
    try:
        await ws.send_json_to({"type": "generate", "sandbox": ecommerce.pk, "task": "Say 1"})
        messages = await collect_until(ws, "generation_finished", timeout=30)
    finally:
        await ws.disconnect()
    generated = next(m for m in messages if m["type"] == "generated")
    attempt = await database_sync_to_async(Attempt.objects.get)(pk=generated["attempt_id"])
    assert attempt.finish_reason == generated["finish_reason"] == kept
    assert attempt.body == "emit_result(1)"
