"""A trial's array or object argument holding `NaN`, `Infinity` or `1e999` is a form error on
the trial panel, never a 500.

Python's json reads those numbers, but no JSON column stores them: the trial's row failed the
database's JSON check (a 500, on SQLite and PostgreSQL alike) after the form had passed.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from jazzmine_web.catalog.services import script_tool_save
from jazzmine_web.scripttools.models import TrialRun

from .conftest import make_tool

pytestmark = pytest.mark.django_db

SCHEMA = {"type": "object", "properties": {"xs": {"type": "array"}, "o": {"type": "object"}}}
VALUES = {
    "NaN": ("xs", "[NaN]"),
    "Infinity": ("xs", "[1, -Infinity]"),
    "1e999": ("o", '{"a": {"b": 1e999}}'),
}


@pytest.mark.parametrize("case", VALUES)
def test_the_trial_panel_refuses_it(member, sandbox, case) -> None:
    row, _ = script_tool_save(
        sandbox=sandbox,
        tool=make_tool("listy", "print('{}')\n", parameters=SCHEMA),
        author=member,
    )
    client = Client(raise_request_exception=False)
    client.force_login(member)
    name, value = VALUES[case]
    url = reverse("scripttools:trial-create", args=[row.pk])
    response = client.post(url, {f"arg-{name}": value}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422, response.status_code
    assert "finite" in response.content.decode()
    assert not TrialRun.objects.exists()
