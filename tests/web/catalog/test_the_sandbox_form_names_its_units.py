"""The sandbox form's limits read with their units: "Memory (MB)" and "CPUs".

Django made the labels from the field names: "Memory mb", "Cpus".
"""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db


def test_the_limits_are_labelled_with_their_units(client, team_admin, ecommerce) -> None:
    client.force_login(team_admin)
    for url in ("/catalog/sandboxes/new/", f"/catalog/sandboxes/{ecommerce.pk}/edit/"):
        response = client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        labels = re.findall(r"<label[^>]*>\s*([^<]+?)\s*(?:<|$)", html)
        for label in ("Memory (MB)", "CPUs", "PIDs limit", "Timeout (seconds)"):
            assert label in labels, (url, labels)
        assert "Memory mb" not in html and "Cpus" not in html
