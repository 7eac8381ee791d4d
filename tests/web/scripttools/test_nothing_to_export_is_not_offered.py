"""A sandbox without script tools offers no zip, and the export answers why instead of an empty zip."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_an_empty_sandbox_disables_the_export_with_a_reason(client, member, sandbox) -> None:
    client.force_login(member)
    html = client.get(reverse("catalog:sandbox", args=[sandbox.pk])).content.decode()
    assert (
        '<button type="button" class="secondary" id="export-script-tools" disabled '
        'title="This sandbox has no script tools to export">'
    ) in html
    assert reverse("scripttools:export", args=[sandbox.pk]) not in html


def test_the_export_of_nothing_answers_a_clear_error_not_an_empty_zip(
    client, member, sandbox
) -> None:
    client.force_login(member)
    response = client.get(reverse("scripttools:export", args=[sandbox.pk]))
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/plain")
    assert "Content-Disposition" not in response
    assert response.content.decode() == "Nothing to export: sandbox 'quant' has no script tools."


def test_a_sandbox_with_a_script_tool_offers_its_zip(client, member, sandbox, rsi_row) -> None:
    client.force_login(member)
    html = client.get(reverse("catalog:sandbox", args=[sandbox.pk])).content.decode()
    url = reverse("scripttools:export", args=[sandbox.pk])
    assert f'id="export-script-tools" href="{url}"' in html
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
