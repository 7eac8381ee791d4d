from __future__ import annotations

import pytest

from jazzmine_web.runs.services import run_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued_run(ecommerce, member):
    return run_create(
        sandbox=ecommerce, user=member, body="emit_result({'ok': True})\n", start=False
    )


def test_a_run_has_a_permanent_page_with_its_script(client, member, queued_run) -> None:
    client.force_login(member)
    response = client.get(f"/runs/{queued_run.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert f'data-run-id="{queued_run.pk}"' in html
    assert "emit_result" in html and 'class="highlight"' in html


def test_the_history_lists_runs_and_filters_them(client, member, queued_run) -> None:
    client.force_login(member)
    html = client.get("/runs/").content.decode()
    assert queued_run.short_id in html
    assert queued_run.short_id not in client.get("/runs/?status=failed").content.decode()
    assert (
        queued_run.short_id
        in client.get("/runs/?sandbox=ecommerce&source=playground").content.decode()
    )


def test_someone_outside_the_team_gets_404(client, outsider, queued_run) -> None:
    client.force_login(outsider)
    assert client.get(f"/runs/{queued_run.pk}/").status_code == 404
    assert queued_run.short_id not in client.get("/runs/").content.decode()
