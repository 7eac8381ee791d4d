"""A script tool's parameters or a trial argument that Python's json cannot read (a 5000-digit
number, nesting 5000 deep) is a field error on the page (422), never a 500."""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import script_tool_save
from jazzmine_web.scripttools.models import TrialRun

from .conftest import rsi_tool

pytestmark = pytest.mark.django_db

BIG = "1" + "0" * 5000
DEEP_ARRAY = "[" * 5000 + "]" * 5000
DEEP_OBJECT = '{"a":' * 5000 + "1" + "}" * 5000

SCHEMAS = {
    "big integer": ('{"type": "object", "x": ' + BIG + "}", "digits"),
    "negative big integer": ('{"type": "object", "x": -' + BIG + "}", "digits"),
    "array nesting": ('{"type": "object", "x": ' + DEEP_ARRAY + "}", "nested too deeply"),
    "object nesting": ('{"type": "object", "x": ' + DEEP_OBJECT + "}", "nested too deeply"),
}
ARRAY_ARGUMENTS = {
    "big integer": ("[" + BIG + "]", "digits"),
    "big integer deep inside": ('[{"a": [' + BIG + "]}]", "digits"),
    "array nesting": (DEEP_ARRAY, "nested too deeply"),
    "object nesting inside": ("[" + DEEP_OBJECT + "]", "nested too deeply"),
}


@pytest.fixture
def browser(member) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(member)
    return client


@pytest.mark.parametrize("case", SCHEMAS)
def test_the_script_tool_form_refuses_the_parameters_with_a_field_error(
    browser, sandbox, case: str
) -> None:
    schema, words = SCHEMAS[case]
    response = browser.post(
        f"/catalog/sandboxes/{sandbox.pk}/script-tools/new/",
        {
            "name": "x_tool",
            "description": "Answer x questions for tests. Use when a test needs the x script.",
            "runtime": "python3",
            "timeout": "30",
            "parameters": schema,
            "source": "print(1)\n",
        },
    )
    assert response.status_code == 422
    assert words in response.content.decode()
    assert not Tool.objects.filter(sandbox=sandbox, name="x_tool").exists()


@pytest.mark.parametrize("case", ARRAY_ARGUMENTS)
def test_a_trial_argument_is_refused_with_a_field_error(
    browser, member, sandbox, case: str
) -> None:
    value, words = ARRAY_ARGUMENTS[case]
    tool = rsi_tool()
    tool.parameters = {"type": "object", "properties": {"prices": {"type": "array"}}}
    row, _ = script_tool_save(sandbox=sandbox, tool=tool, author=member)
    response = browser.post(f"/catalog/tools/{row.pk}/trials/", {"arg-prices": value})
    assert response.status_code == 422
    assert words in response.content.decode()
    assert not TrialRun.objects.exists()


def test_a_trial_object_argument_is_refused_the_same_way(browser, member, sandbox) -> None:
    tool = rsi_tool()
    tool.parameters = {"type": "object", "properties": {"options": {"type": "object"}}}
    row, _ = script_tool_save(sandbox=sandbox, tool=tool, author=member)
    response = browser.post(
        f"/catalog/tools/{row.pk}/trials/", {"arg-options": '{"n": ' + BIG + "}"}
    )
    assert response.status_code == 422
    assert "digits" in response.content.decode()
