"""Every code example in the three jazzmine seeds, run as written."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from jazzmine.core.tools import ScriptGenerator, Tool, ToolParameter, ToolResponse, registry

from . import seed_tools


def test_the_complex_parameter_example_builds_the_seed_xml() -> None:
    param = ToolParameter(
        name="order_id",
        type="str",
        description="The unique alphanumeric ID of the customer's order.",
        required=True,
        examples=["ORD-12345", "ORD-99887"],
        source="context",
        display_name="Order Reference Number",
    )
    xml = param.build_prompt()
    lines = [line.strip() for line in xml.splitlines()]
    assert lines == [
        '<parameter name="order_id" type="str" required="True">',
        "<description>The unique alphanumeric ID of the customer's order.</description>",
        "<source>context</source>",
        "<display_name>Order Reference Number</display_name>",
        "<examples>",
        "<example>ORD-12345</example>",
        "<example>ORD-99887</example>",
        "</examples>",
        "</parameter>",
    ]
    ET.fromstring(xml)


def test_the_response_examples_build_success_and_soft_failure() -> None:
    res_ok = ToolResponse(success=True, data={"status": "shipped", "eta": "2023-12-01"})
    res_fail = ToolResponse(
        success=False,
        message="Order ID not found in database.",
        data={"attempted_id": "ORD-000"},
    )
    assert res_ok.to_dict() == {
        "success": True,
        "message": None,
        "data": {"status": "shipped", "eta": "2023-12-01"},
    }
    assert ET.fromstring(res_fail.build_prompt()).find("message").text == (
        "Order ID not found in database."
    )


def test_the_inventory_tool_example_prints_its_prompt(capsys) -> None:
    inventory_tool = Tool(
        name="check_inventory",
        description="Check stock levels for a specific product in a warehouse.",
        parameters=[
            ToolParameter("product_id", "str", "The SKU of the item.", required=True),
            ToolParameter("warehouse", "str", "The city name.", default="New York"),
        ],
    )
    print(inventory_tool.build_prompt())
    root = ET.fromstring(capsys.readouterr().out)
    assert root.get("name") == "check_inventory"
    params = root.findall("./parameters/parameter")
    assert [p.get("name") for p in params] == ["product_id", "warehouse"]
    assert params[0].get("required") == "True"
    assert params[1].find("default").text == "New York"


def test_the_comprehensive_registration_example_aggregates_the_sandbox() -> None:
    assert registry.aggregate_dependencies("analytics") == ["numpy", "pandas"]
    assert registry.aggregate_secrets("analytics") == ["ANALYTICS_TOKEN", "DB_URL"]
    prompt = registry.build_tools_prompt("analytics")
    root = ET.fromstring(prompt)
    assert [t.get("name") for t in root] == ["analyze_behavior"]
    registered = registry.get_tool("analytics", "analyze_behavior")
    assert registered.is_async
    assert registered.source.startswith("async def analyze_behavior(user_id: str)")
    assert "@tool" not in registered.source
    assert registered.fn is seed_tools.analyze_behavior


def test_the_generation_and_validation_cycle_accepts_the_seed_script() -> None:
    generator = ScriptGenerator(registry)
    prompt = generator.build_prompt(
        task="Calculate the total revenue from the 'orders' list.",
        sandbox_name="ecommerce",
    )
    assert "Calculate the total revenue" in prompt
    assert '<tool name="get_orders">' in prompt
    llm_code = """
items = get_orders().data['orders']
total = sum(i['price'] for i in items)
emit_result({'total': total})
"""
    full_script = generator.assemble_script(llm_code, sandbox_name="ecommerce")
    violations = generator.validate(full_script, sandbox_name="ecommerce")
    assert violations == []
    assert generator.validation_error_message(violations) == ""
