from __future__ import annotations

import datetime
import xml.etree.ElementTree as ET

import pytest

from jazzmine.core.tools import Tool, ToolParameter, ToolResponse


def test_parameters_take_all_nine_attributes_in_seed_order() -> None:
    p = ToolParameter(
        "status",
        "str",
        "Order status",
        "open",
        False,
        ["open", "closed"],
        ["open"],
        "history",
        "Status",
    )
    assert p.to_dict() == {
        "name": "status",
        "type": "str",
        "description": "Order status",
        "default": "open",
        "required": False,
        "options": ["open", "closed"],
        "examples": ["open"],
        "source": "history",
        "display_name": "Status",
    }
    assert ToolParameter.from_dict(p.to_dict()) == p


def test_it_escapes_markup_in_descriptions_so_the_xml_still_parses() -> None:
    t = Tool(
        name="search",
        description='Find <b>products</b> & "deals" where price < 10',
        parameters=[
            ToolParameter(
                "q", 'str "quoted"', "Text with </parameter> inside", examples=["a<b", "x&y"]
            ),
        ],
    )
    root = ET.fromstring(t.build_prompt())
    assert root.find("description").text == 'Find <b>products</b> & "deals" where price < 10'
    param = root.find("./parameters/parameter")
    assert param.get("type") == 'str "quoted"'
    assert param.find("description").text == "Text with </parameter> inside"
    assert [e.text for e in param.findall("./examples/example")] == ["a<b", "x&y"]


def test_non_string_examples_and_options_are_rendered_as_json() -> None:
    p = ToolParameter("limit", "int", options=[10, 20], examples=[{"a": 1}], default=10)
    root = ET.fromstring(p.build_prompt())
    assert [o.text for o in root.findall("./options/option")] == ["10", "20"]
    assert root.find("./examples/example").text == '{"a": 1}'
    assert root.find("default").text == "10"


def test_a_response_with_data_that_is_not_json_safe_names_the_field() -> None:
    with pytest.raises(ValueError, match=r"ToolResponse.data\['when'\] holds a datetime"):
        ToolResponse(success=True, data={"when": datetime.datetime.now()})
    with pytest.raises(ValueError, match=r"ToolResponse.data\['rows'\]\[1\]"):
        ToolResponse(success=True, data={"rows": [1, object()]})
    with pytest.raises(ValueError, match=r"NaN|nan"):
        ToolResponse(success=True, data={"x": float("nan")})


def test_a_failed_response_without_a_message_is_refused() -> None:
    with pytest.raises(ValueError, match="needs a message"):
        ToolResponse(success=False)
    with pytest.raises(ValueError, match="needs a message"):
        ToolResponse(success=False, message="   ")


def test_a_response_prompt_parses_and_round_trips() -> None:
    r = ToolResponse(success=False, message="no <order> & no luck", data={"id": "ORD-0"})
    root = ET.fromstring(r.build_prompt())
    assert root.get("success") == "False"
    assert root.find("message").text == "no <order> & no luck"
    assert ToolResponse.from_dict(r.to_dict()) == r


def test_a_parameter_with_an_unknown_source_is_refused() -> None:
    with pytest.raises(ValueError, match="source must be one of"):
        ToolParameter("x", "str", source="database")


def test_a_tool_needs_an_identifier_name_and_a_description() -> None:
    with pytest.raises(ValueError, match="identifier"):
        Tool(name="get user", description="x")
    with pytest.raises(ValueError, match="needs a description"):
        Tool(name="get_user", description=" ")
    with pytest.raises(ValueError, match="twice"):
        Tool(
            name="t",
            description="d",
            parameters=[ToolParameter("a", "int"), ToolParameter("a", "int")],
        )


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ({"name": "sku", "type": "str", "bogus": 1}, "parameter 'sku' has unknown key(s) 'bogus'"),
        ({"type": "str"}, "a parameter needs a name"),
        ({"name": "sku"}, "parameter 'sku' needs a type"),
        ({}, "a parameter needs a name and a type"),
        (["sku", "str"], "each parameter is a JSON object"),
    ],
)
def test_a_parameter_from_a_person_is_refused_in_their_words(data, said) -> None:
    # Python's own words were shown in the tool form: "__init__() got an unexpected keyword".
    with pytest.raises(ValueError) as info:
        ToolParameter.from_dict(data)
    assert said in str(info.value) and "__init__" not in str(info.value)
