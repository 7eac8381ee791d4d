"""A run that waited for its image says so while it waits, and nothing of it once it runs.

RUNNING was stored without touching the message: a run whose image was built first read
"Running · building image" on its page after a reload, and in the API, until it ended.
"""

from __future__ import annotations

import pytest

from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create, run_set_status

pytestmark = pytest.mark.django_db


def test_running_clears_the_message_of_the_wait(client, ecommerce, member) -> None:
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    run_set_status(run_id=run.pk, status=RunStatus.PREPARING, message="building image")
    assert Run.objects.get(pk=run.pk).message == "building image"
    run_set_status(run_id=run.pk, status=RunStatus.RUNNING, backend="docker", image="x")
    assert Run.objects.get(pk=run.pk).message == ""
    client.force_login(member)
    for _ in range(2):  # the page, and a reload
        html = client.get(f"/runs/{run.pk}/").content.decode()
        assert "building image" not in html and 'data-status="running"' in html
