"""The admin shows the rows the services wrote (a tool's versions, a run's events) as text,
with no field to edit, no row to add and no box to delete one."""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.catalog.models import SecretValue, Tool
from jazzmine_web.runs.models import RunEvent
from jazzmine_web.runs.services import run_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(django_user_model) -> Client:
    client = Client()
    client.force_login(
        django_user_model.objects.create_superuser(username="root", password="x" * 12)
    )
    return client


def _shows_read_only(page: str, prefix: str, fields: list[str]) -> None:
    assert f'name="{prefix}-TOTAL_FORMS" value="1"' in page  # the row is there
    for field in [*fields, "DELETE"]:
        assert f'name="{prefix}-0-{field}"' not in page, field  # shown as text, no input
    assert f'id="{prefix}-empty"' not in page  # no template row for "Add another"


def test_a_tools_versions_are_shown_not_edited(root, ecommerce) -> None:
    tool = Tool.objects.filter(sandbox=ecommerce).first()
    response = root.get(f"/admin/catalog/tool/{tool.pk}/change/")
    assert response.status_code == 200
    page = response.content.decode()
    assert tool.checksum in page
    _shows_read_only(page, "versions", ["number", "checksum", "author", "note"])


def test_a_runs_events_are_shown_not_edited(root, ecommerce, member) -> None:
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    RunEvent.objects.create(run=run, seq=1, type="result", data=41, ts=1.0)
    response = root.get(f"/admin/runs/run/{run.pk}/change/")
    assert response.status_code == 200
    _shows_read_only(response.content.decode(), "events", ["seq", "type", "data", "ts"])


def test_a_sandboxes_secret_values_are_named_never_shown(root, ecommerce, team_admin) -> None:
    SecretValue.objects.create(
        sandbox=ecommerce, name="SHOP_KEY", ciphertext="c" * 20, set_by=team_admin
    )
    response = root.get(f"/admin/catalog/sandbox/{ecommerce.pk}/change/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "SHOP_KEY" in page and "c" * 20 not in page
    _shows_read_only(page, "secret_values", ["name", "set_by", "set_at"])
