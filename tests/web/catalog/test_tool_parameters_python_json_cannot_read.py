"""A Python tool's parameters that Python's json cannot read (a 5000-digit number, nesting 5000
deep) are a field error on the tool form, never a 500."""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.catalog.models import Tool
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import membership_set

pytestmark = pytest.mark.django_db

BIG = "1" + "0" * 5000
PARAMETERS = {
    "big integer": ("[" + BIG + "]", "digits"),
    "big default": ('[{"name": "n", "type": "int", "default": ' + BIG + "}]", "digits"),
    "negative big default": ('[{"name": "n", "type": "int", "default": -' + BIG + "}]", "digits"),
    "array nesting": ("[" * 5000 + "]" * 5000, "nested too deeply"),
    "object nesting": ('[{"a":' * 2500 + "1" + "}]" * 2500, "nested too deeply"),
}


@pytest.mark.parametrize("case", PARAMETERS)
def test_the_tool_form_refuses_the_parameters_with_a_field_error(
    member, ecommerce, case: str
) -> None:
    parameters, words = PARAMETERS[case]
    membership_set(team=ecommerce.team, user=member, role=Role.ADMIN)
    client = Client(raise_request_exception=False)
    client.force_login(member)
    response = client.post(
        f"/catalog/sandboxes/{ecommerce.pk}/tools/new/",
        {"name": "x_tool", "description": "d", "parameters": parameters, "source": "x"},
    )
    assert response.status_code == 422
    assert words in response.content.decode()
    assert not Tool.objects.filter(name="x_tool").exists()
