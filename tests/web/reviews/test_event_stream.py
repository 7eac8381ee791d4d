from __future__ import annotations

import json

import pytest
from django.test import AsyncClient

from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_approve

from .conftest import submit

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

BODY = """\
for i in range(3):
    emit_intermediate("step", {"i": i})
orders = get_orders(status="delivered")
emit_result({"n": len(orders.data["orders"])})
"""


async def read_lines(issued, submission_id, after: int = 0) -> list[dict]:
    client = AsyncClient()
    response = await client.get(
        f"/api/v1/submissions/{submission_id}/events/?after={after}",
        headers={"Authorization": f"Bearer {issued.raw}"},
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson"
    chunks = [chunk async for chunk in response.streaming_content]
    return [json.loads(line) for line in b"".join(chunks).decode().splitlines() if line]


def test_the_stream_carries_status_then_every_event_then_the_end(
    api, issued, ecommerce, reviewer, worker
):
    import asyncio

    state = submit(api, ecommerce, body=BODY).json()
    submission_approve(submission=Submission.objects.get(pk=state["id"]), user=reviewer)
    lines = asyncio.run(read_lines(issued, state["id"]))
    kinds = [line["type"] for line in lines]
    assert kinds[0] == "submission" and kinds[-1] == "end"
    events = [line["event"] for line in lines if line["type"] == "event"]
    assert [e["type"] for e in events] == ["intermediate"] * 3 + ["result", "exit"]
    assert [e["seq"] for e in events] == [1, 2, 3, 4, 5]
    assert lines[-1] == {"type": "end", "status": "approved", "final": True}

    resumed = asyncio.run(read_lines(issued, state["id"], after=3))
    assert [line["event"]["seq"] for line in resumed if line["type"] == "event"] == [4, 5]


def test_a_refused_submission_streams_its_status_and_ends(api, issued, ecommerce):
    import asyncio

    state = submit(api, ecommerce, body="import os\n").json()
    lines = asyncio.run(read_lines(issued, state["id"]))
    assert [line["type"] for line in lines] == ["submission", "end"]
    assert "import" in lines[0]["previous_error"]
