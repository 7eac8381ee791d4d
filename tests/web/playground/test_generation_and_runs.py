from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async

from jazzmine_web.playground.models import Attempt, PlaygroundSession
from tests.web.helpers import collect_until, playground_socket

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]


async def test_generate_streams_tokens_into_the_editor_and_records_the_attempt(
    ecommerce, member, llm
):
    llm.script("```python\nr = get_orders()\nemit_result({'n': len(r.data['orders'])})\n```")
    ws = await playground_socket(member)
    try:
        await ws.send_json_to({"type": "generate", "sandbox": ecommerce.pk, "task": "Count orders"})
        messages = await collect_until(ws, "generation_finished")
    finally:
        await ws.disconnect()
    tokens = [m["text"] for m in messages if m["type"] == "token"]
    assert len(tokens) > 3, "the answer arrives token by token"
    generated = next(m for m in messages if m["type"] == "generated")
    assert generated["body"] == "r = get_orders()\nemit_result({'n': len(r.data['orders'])})"
    attempt = await database_sync_to_async(Attempt.objects.get)(pk=generated["attempt_id"])
    assert attempt.raw_answer.startswith("```python") and attempt.completion_tokens
    assert "Count orders" in attempt.prompt


async def test_auto_mode_retries_with_the_key_error_hint_until_it_succeeds(
    ecommerce, trusted, member, llm, worker
):
    # The task's script calls update_order_status as well: only trusted automation runs it.
    ws = await playground_socket(member)
    try:
        await ws.send_json_to(
            {
                "type": "auto",
                "sandbox": ecommerce.pk,
                "task": "Show the first order",
                "max_attempts": 3,
            }
        )
        messages = await collect_until(ws, "finished", timeout=180)
    finally:
        await ws.disconnect()
    finished = messages[-1]
    assert finished == {"type": "finished", "success": True, "attempts": 2}
    assert len([m for m in messages if m["type"] == "run_created"]) == 2
    session_id = next(m for m in messages if m["type"] == "session")["session"]
    attempts = await database_sync_to_async(
        lambda: list(PlaygroundSession.objects.get(pk=session_id).attempts.select_related("run"))
    )()
    assert [a.run.status for a in attempts] == ["failed", "succeeded"]
    assert "KeyError: 0" in attempts[0].run.error
    assert "means you indexed `r.data` with an integer" in attempts[1].prompt
    assert attempts[1].hint and "KeyError" in attempts[1].previous_error


async def test_run_starts_a_run_of_the_editor_text_and_refuses_violations(
    ecommerce, member, worker
):
    ws = await playground_socket(member)
    try:
        await ws.send_json_to(
            {
                "type": "run",
                "sandbox": ecommerce.pk,
                "task": "t",
                "body": "import os\nemit_result(1)\n",
            }
        )
        refused = await ws.receive_json_from(timeout=10)
        assert refused["type"] == "run_refused" and refused["violations"][0]["line"] == 1

        await ws.send_json_to(
            {
                "type": "run",
                "sandbox": ecommerce.pk,
                "task": "t",
                "body": "emit_result({'ok': True})\n",
            }
        )
        created = await ws.receive_json_from(timeout=10)
        assert created["type"] == "run_created" and created["run_id"]
        # The run streams on the same socket: its pane, its events as the pane's own
        # fragments, then its final status.
        pane = await ws.receive_json_from(timeout=10)
        assert pane["type"] == "run_pane" and f'id="run-output-{created["run_id"]}"' in pane["html"]
        assert "data-run-fed" in pane["html"] and "ws-connect" not in pane["html"]
        fragments = []
        while True:
            message = await ws.receive_json_from(timeout=120)
            assert message["run_id"] == created["run_id"]
            if message["type"] == "run_html":
                fragments.append(message["html"])
            elif message["status"] in ("succeeded", "failed"):
                break
        assert message["status"] == "succeeded"
        html = "".join(fragments)
        assert 'data-run-result hx-swap-oob="true"' in html and "exit: result" in html
        assert [int(n) for n in re.findall(r'data-seq="(\d+)"', html)] == [2]  # 1 is the result
    finally:
        await ws.disconnect()


async def test_without_an_llm_generate_says_how_to_configure_one(ecommerce, member, settings):
    settings.JAZZMINE_LLM_BASE_URL = ""
    ws = await playground_socket(member)
    try:
        await ws.send_json_to({"type": "generate", "sandbox": ecommerce.pk, "task": "x"})
        reply = await ws.receive_json_from(timeout=5)
    finally:
        await ws.disconnect()
    assert reply["type"] == "error" and "JAZZMINE_LLM_BASE_URL" in reply["message"]


async def test_a_bash_run_of_a_command_nothing_answers_to_is_refused_saying_which(
    ecommerce, member
):
    # As the editor says while it is typed, and the API when an agent submits it: run, the
    # script would stop at exit 127, and a tool of that name created later would be called.
    from jazzmine_web.runs.models import Run

    body = "get_orders --status delivered\nno_such_tool --x 1\n"
    ws = await playground_socket(member)
    try:
        for _ in range(2):  # and Run pressed again
            message = {"type": "run", "sandbox": ecommerce.pk, "task": "t", "body": body}
            await ws.send_json_to({**message, "language": "bash"})
            refused = await ws.receive_json_from(timeout=10)
            assert refused["type"] == "run_refused", refused
            (violation,) = refused["violations"]
            assert violation["line"] == 2
            assert "'no_such_tool' is not a command here" in violation["message"]
            assert "get_orders" in violation["message"]  # the names that do answer
    finally:
        await ws.disconnect()
    assert not await database_sync_to_async(Run.objects.exists)()


async def test_auto_mode_writes_and_runs_bash_with_bashkits_prompt(
    ecommerce, trusted, member, llm, worker
):
    llm.script(
        "```bash\nget_orders --status delivered | jq '.orders | length'\n```",
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
    assert messages[-1] == {"type": "finished", "success": True, "attempts": 1}
    generated = next(m for m in messages if m["type"] == "generated")
    assert generated["body"] == "get_orders --status delivered | jq '.orders | length'"
    prompt = llm.requests[-1].prompt
    assert "get_orders" in prompt and "How many orders were delivered?" in prompt
    attempt = await database_sync_to_async(
        lambda: Attempt.objects.select_related("run").get(pk=generated["attempt_id"])
    )()
    assert attempt.language == "bash" and attempt.run.language == "bash"
    assert attempt.run.result["stdout"].strip() == "2"


async def _run_to_end(ws, message: dict) -> dict:
    await ws.send_json_to(message)
    created = await ws.receive_json_from(timeout=10)
    assert created["type"] == "run_created", created
    while True:
        status = await ws.receive_json_from(timeout=120)
        if status["type"] == "status" and status["status"] in ("succeeded", "failed"):
            return {**created, "status": status["status"]}


async def test_a_persons_retry_is_recorded_with_the_prompt_that_quotes_the_failed_attempt(
    ecommerce, member, worker
):
    # The run goes to a worker before the attempt's prompt is built: both must still be
    # stored, the prompt quoting the attempt before this one (not this one).
    ws = await playground_socket(member)
    first_body = "r = get_orders()\nemit_result(r.data[0])\n"
    fixed_body = "r = get_orders()\nemit_result(r.data['orders'][0])\n"
    try:
        base = {"type": "run", "sandbox": ecommerce.pk, "task": "Show the first order"}
        first = await _run_to_end(ws, {**base, "body": first_body})
        second = await _run_to_end(
            ws, {**base, "body": fixed_body, "session": first["session"], "retry": True}
        )
        refused_body = "import os\nemit_result(1)\n"
        await ws.send_json_to({**base, "body": refused_body, "session": first["session"]})
        assert (await ws.receive_json_from(timeout=10))["type"] == "run_refused"
        await ws.send_json_to(
            {"type": "validate", "sandbox": ecommerce.pk, "version": 1, "body": ""}
        )
        await ws.receive_json_from(timeout=10)  # answered after the refused run's prompt
    finally:
        await ws.disconnect()
    assert (first["status"], second["status"]) == ("failed", "succeeded")
    assert second["session"] == first["session"]
    attempts = await database_sync_to_async(
        lambda: list(
            PlaygroundSession.objects.get(pk=first["session"]).attempts.select_related("run")
        )
    )()
    assert [(a.number, a.run and a.run.attempt, a.run_id and str(a.run_id)) for a in attempts] == [
        (1, 1, first["run_id"]),
        (2, 2, second["run_id"]),
        (3, None, None),
    ]
    failed, fixed, refused_attempt = attempts
    assert refused_attempt.violations and "Show the first order" in refused_attempt.prompt
    assert "Show the first order" in failed.prompt and not failed.previous_error
    assert first_body.strip() not in failed.prompt
    assert "KeyError: 0" in fixed.previous_error and fixed.hint
    assert first_body.strip() in fixed.prompt and fixed_body.strip() not in fixed.prompt
