"""The audit CSV's `data` column is JSON a program can read back, not Python's repr."""

from __future__ import annotations

import csv
import io
import json

import pytest

from jazzmine_web.reviews.models import AuditEntry
from jazzmine_web.teams.services import api_token_create

from .conftest import submit

pytestmark = pytest.mark.django_db


def test_every_data_cell_parses_as_json_and_matches_the_row(
    member, ecommerce, reviewer_client
) -> None:
    from django.test import Client

    issued = api_token_create(user=member, name="ci-agent")
    agent = Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}")
    submit(agent, ecommerce, task="Count Ada's orders")
    stored = {e.pk: e.data for e in AuditEntry.objects.all()}
    assert any(stored.values()), "some entry carries data"

    response = reviewer_client.get("/reviews/audit/?format=csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert rows and all("data" in row for row in rows)
    parsed = [json.loads(row["data"]) for row in rows]  # Python's repr would not parse

    def canonical(data: object) -> str:
        return json.dumps(data or {}, sort_keys=True)

    assert sorted(map(canonical, parsed)) == sorted(map(canonical, stored.values()))
