"""A lone carriage return ends a line wherever a script comes from, as every page draws it.

Pages, the editor and Python read a lone `\\r` as a line's end; bash reads it as part of the
line. A bash script `# count the orders\\rget_orders ...` was drawn as a comment and a
command, and ran as one comment: nothing. Submissions had their line ends made plain; the
playground's Run, by a person or by an LLM's answer in Auto, did not.
"""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from jazzmine_web.playground.models import Attempt
from jazzmine_web.runs.models import Run, code_sha256
from tests.web.helpers import collect_until, playground_socket

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]


async def test_an_llms_bash_answer_runs_the_lines_the_editor_shows(
    ecommerce, trusted, member, llm, worker
):
    llm.script(
        "```bash\n# count the delivered orders\rget_orders --status delivered | jq '.orders | length'\n```"
    )
    ws = await playground_socket(member)
    try:
        await ws.send_json_to(
            {
                "type": "auto",
                "sandbox": ecommerce.pk,
                "task": "How many orders were delivered?",
                "language": "bash",
                "max_attempts": 1,
            }
        )
        messages = await collect_until(ws, "finished", timeout=240)
    finally:
        await ws.disconnect()
    generated = next(m for m in messages if m["type"] == "generated")
    attempt = await database_sync_to_async(
        lambda: Attempt.objects.select_related("run").get(pk=generated["attempt_id"])
    )()
    assert "\r" not in attempt.body and "\r" not in attempt.run.script
    assert attempt.run.result["stdout"].strip() == "2", attempt.run.result


@pytest.mark.parametrize("newline", ["\r", "\r\n"], ids=["cr", "crlf"])
async def test_a_persons_bash_runs_the_lines_the_editor_shows(ecommerce, member, worker, newline):
    body = f"# a note{newline}echo RAN{newline}echo AGAIN{newline}"
    ws = await playground_socket(member)
    try:
        await ws.send_json_to(
            {"type": "run", "sandbox": ecommerce.pk, "task": "t", "body": body, "language": "bash"}
        )
        created = await ws.receive_json_from(timeout=10)
        assert created["type"] == "run_created", created
        while True:
            status = await ws.receive_json_from(timeout=120)
            if status["type"] == "status" and status["status"] in ("succeeded", "failed"):
                break
    finally:
        await ws.disconnect()
    run = await database_sync_to_async(Run.objects.get)(pk=created["run_id"])
    attempt = await database_sync_to_async(Attempt.objects.get)(run=run)
    assert attempt.body == run.body == run.script  # the editor's lines, after a reload too
    assert run.script == "# a note\necho RAN\necho AGAIN\n"
    assert run.code_sha256 == code_sha256(run.script)
    assert run.result["stdout"] == "RAN\nAGAIN\n", run.result
