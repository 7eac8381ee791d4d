"""A run waiting for a free worker says how many runs are ahead of it."""

from __future__ import annotations

import pytest

from jazzmine_web.runs.services import run_create

pytestmark = pytest.mark.django_db


def test_a_queued_run_page_tells_how_many_runs_wait_before_it(client, ecommerce, member):
    runs = [
        run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
        for _ in range(3)
    ]
    client.force_login(member)
    first = client.get(f"/runs/{runs[0].pk}/").content.decode()
    third = client.get(f"/runs/{runs[2].pk}/").content.decode()
    assert "data-queue-position" not in first  # nothing ahead of it: it goes next
    assert "Queued: 2 runs ahead of it" in third
    runs[0].status = "running"
    runs[0].save(update_fields=["status"])
    assert "Queued: 1 run ahead of it (next)" in client.get(f"/runs/{runs[2].pk}/").content.decode()
