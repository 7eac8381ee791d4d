"""Builtin schemas derived from jazzmine parameters and from script tools."""

from __future__ import annotations

import pytest

from jazzmine.bash import (
    json_type,
    schema_from_parameters,
    spec_from_script_tool,
    specs_for_sandbox,
)
from jazzmine.core.tools import ToolParameter, ToolRegistry
from jazzmine.scripttools import load_tool_dir, register_script_tool
from tests.scripttools.samples import RSI


@pytest.mark.parametrize(
    ("annotation", "schema"),
    [
        ("str", {"type": "string"}),
        ("int", {"type": "integer"}),
        ("float", {"type": "number"}),
        ("bool", {"type": "boolean"}),
        ("list", {"type": "array"}),
        ("List[int]", {"type": "array", "items": {"type": "integer"}}),
        ("list[str]", {"type": "array", "items": {"type": "string"}}),
        ("dict", {"type": "object"}),
        ("Dict[str, Any]", {"type": "object"}),
        ("Optional[int]", {"type": "integer"}),
        ("int | None", {"type": "integer"}),
        ("Any", {}),
    ],
)
def test_it_maps_python_types_to_json_schema(annotation, schema):
    assert json_type(annotation) == schema


def test_options_become_an_enum_and_required_names_are_listed():
    schema = schema_from_parameters([
        ToolParameter("id", "int", "User id", required=True),
        ToolParameter("status", "str", "Order status", options=["open", "closed"], default="open"),
    ])  # fmt: skip
    assert schema == {
        "type": "object",
        "properties": {
            "id": {"type": "integer", "description": "User id"},
            "status": {"type": "string", "description": "Order status",
                       "enum": ["open", "closed"], "default": "open"},
        },
        "required": ["id"],
    }  # fmt: skip


def test_a_script_tool_keeps_its_own_schema_in_the_sandbox_tool_set():
    tool = load_tool_dir(RSI)
    registry = ToolRegistry()
    register_script_tool(registry, tool)
    [spec] = specs_for_sandbox(registry, "default", script_tools=[tool])
    assert spec == spec_from_script_tool(tool)
    assert spec.schema["properties"]["signal"]["enum"] == ["label", "none"]
