"""The playground's bash mode: bashkit's prompt for the tool set, a light check, bash runs."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.urls import reverse

from jazzmine_web.catalog.services import tool_create
from jazzmine_web.runs.models import Run, RunStatus
from tests.waiting import wait_until_async
from tests.web.helpers import playground_socket

PING = 'def ping(word: str = "pong") -> ToolResponse:\n    return ToolResponse(success=True, data={"word": word})\n'


@pytest.fixture
def pinged(sandbox):
    tool_create(sandbox=sandbox, name="ping", description="Answer with a word", source=PING,
                parameters=[{"name": "word", "type": "str", "default": "pong"}])  # fmt: skip
    return sandbox


def test_the_prompt_panel_shows_the_bashkit_prompt_for_the_tools(client, member, pinged) -> None:
    client.force_login(member)
    response = client.get(
        reverse("playground:prompt"),
        {"sandbox": pinged.pk, "language": "bash", "task": "Say pong"},
    )
    html = response.content.decode()
    assert 'data-prompt-language="bash"' in html
    assert "ping" in html and "Task: Say pong" in html
    python = client.get(reverse("playground:prompt"), {"sandbox": pinged.pk}).content.decode()
    assert 'data-prompt-language="python"' in python


def test_the_page_offers_a_language_switch(client, member, pinged) -> None:
    client.force_login(member)
    html = client.get(reverse("playground:index"), {"language": "bash"}).content.decode()
    assert 'id="language-select"' in html and 'data-language="bash"' in html


@pytest.mark.django_db(transaction=True)
async def test_bash_is_checked_lightly_not_by_the_python_validator(pinged, member) -> None:
    ws = await playground_socket(member)
    try:
        body = "ping --word hi | jq -r .word\nimport os\n"  # not Python: no Python violations
        await ws.send_json_to(
            {"type": "validate", "version": 3, "sandbox": pinged.pk, "body": body,
             "language": "bash"}
        )  # fmt: skip
        reply = await ws.receive_json_from(timeout=5)
        # No Python violation (`import os` is no import refused): bash's own reading says
        # that no command `import` exists where the script runs.
        assert reply["version"] == 3
        assert [v["message"] for v in reply["violations"]] == [
            "Line 2: 'import' is not a command here: neither a tool of this sandbox (ping) nor a "
            "command of bash's (it has no file system and none of the host's programs)"
        ]
        assert "<span" in reply["html"]
    finally:
        await ws.disconnect()


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
async def test_a_bash_run_from_the_playground_is_a_bash_run(
    pinged, member, base_image, worker
) -> None:
    ws = await playground_socket(member)
    try:
        await ws.send_json_to(
            {"type": "run", "sandbox": pinged.pk, "task": "Say hi", "language": "bash",
             "body": "ping --word hi | jq -r .word\n"}
        )  # fmt: skip
        reply = await ws.receive_json_from(timeout=10)
        assert reply["type"] == "run_created", reply
    finally:
        await ws.disconnect()
    run = await database_sync_to_async(Run.objects.get)(pk=reply["run_id"])
    assert run.language == "bash"

    async def finished() -> bool:  # the worker may finish before we could ask for its future
        await database_sync_to_async(run.refresh_from_db)()
        return run.is_finished

    await wait_until_async(finished, timeout=300, interval=0.5, message="the run never finished")
    assert run.status == RunStatus.SUCCEEDED, (run.outcome, run.message, run.error)
    assert run.result["stdout"] == "hi\n"
