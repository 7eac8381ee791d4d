"""The LLM's script run again, unedited, is recorded as the LLM's; an edited one as a person's.

Generate, Run, then Run again without touching the editor: the second run was recorded as
"Written by a person", and the prompt debugger compared a person's attempt where the LLM's
script had simply run twice. Run again makes the session's next attempt, the LLM's, with the
same prompt and answer.
"""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from jazzmine_web.playground.models import Attempt, AttemptSource
from tests.web.helpers import collect_until, playground_socket

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

BODY = "emit_result({'n': 1})"


async def run(ws, ecommerce, session, attempt_id, body: str = BODY) -> dict:
    """Press Run with the editor's body; return `run_created` once the run has ended."""
    message = {"type": "run", "sandbox": ecommerce.pk, "task": "Count", "body": body}
    await ws.send_json_to({**message, "session": session, "attempt_id": attempt_id})
    created = await ws.receive_json_from(timeout=10)
    assert created["type"] == "run_created", created
    while True:
        said = await ws.receive_json_from(timeout=120)
        if said.get("status") in ("succeeded", "failed"):
            return created


async def test_run_again_of_the_llms_script_is_the_llms(ecommerce, member, llm, worker) -> None:
    llm.script(f"```python\n{BODY}\n```")
    ws = await playground_socket(member)
    try:
        await ws.send_json_to({"type": "generate", "sandbox": ecommerce.pk, "task": "Count"})
        said = {m["type"]: m for m in await collect_until(ws, "generation_finished")}
        session, generated = said["session"]["session"], said["generated"]
        first = await run(ws, ecommerce, session, generated["attempt_id"])
        second = await run(ws, ecommerce, session, first["attempt_id"])
        third = await run(ws, ecommerce, session, second["attempt_id"], body=BODY + "\n# mine")
    finally:
        await ws.disconnect()
    rows = await database_sync_to_async(
        lambda: {a.pk: a for a in Attempt.objects.select_related("run")}
    )()
    assert first["attempt_id"] == generated["attempt_id"]
    again = rows[second["attempt_id"]]
    assert again.pk != first["attempt_id"] and again.source == AttemptSource.LLM
    assert again.prompt == rows[first["attempt_id"]].prompt and again.raw_answer
    assert again.run_id and again.run_id != rows[first["attempt_id"]].run_id
    assert rows[third["attempt_id"]].source == AttemptSource.HUMAN  # edited: a person's
