"""The bash prompt says what each tool does and what each flag takes, as the Python one does.

bashkit's prompt lists commands by their flags' types alone (`get_user [--user_id <string>]`):
no description, every flag drawn optional, no allowed values, so a model writing bash made a
status up and the call failed. The reference comes from the schemas bashkit checks calls by.
"""

from __future__ import annotations

from jazzmine.bash import BashSession, ToolSpec, system_prompt
from jazzmine.bash.reference import LISTED_VALUES

ORDERS = ToolSpec(
    "get_orders",
    "List recent orders,\nnewest first.",
    {
        "type": "object",
        "properties": {
            "status": {
                "type": "string",
                "enum": ["pending", "delivered"],
                "description": "Only orders\n  with this status.",
            },
            "limit": {"type": "integer", "default": 20},
        },
    },
)
USER = ToolSpec(
    "get_user",
    "Fetch one customer.",
    {
        "type": "object",
        "properties": {"user_id": {"type": "string", "examples": ["U-1", "U-2"]}},
        "required": ["user_id"],
    },
)
PING = ToolSpec("ping", "", {"type": "object", "properties": {}})


def test_each_tool_and_flag_reads_as_its_schema_says() -> None:
    prompt = system_prompt([ORDERS, USER, PING])
    assert "get_orders: List recent orders, newest first." in prompt
    assert (
        "  --status <string>  optional; one of: pending, delivered; Only orders with this status."
        in prompt
    )
    assert "  --limit <integer>  optional; default 20" in prompt
    assert "get_user: Fetch one customer.\n  --user_id <string>  required; e.g. U-1, U-2" in prompt
    assert "\nping\n  (no flags)" in prompt
    # bashkit's own line stays first, and what a tool reads is still said.
    assert prompt.startswith(BashSession([ORDERS, USER, PING], {}).system_prompt())


def test_a_long_list_of_values_is_cut_and_says_where_the_rest_is() -> None:
    many = {"type": "string", "enum": [f"v{i}" for i in range(LISTED_VALUES + 7)]}
    spec = ToolSpec("pick", "Pick one.", {"type": "object", "properties": {"v": many}})
    prompt = system_prompt([spec])
    assert f"v{LISTED_VALUES - 1} and 7 more (help <tool> --json)" in prompt
    assert f"v{LISTED_VALUES}," not in prompt


def test_a_tool_bash_does_not_offer_is_not_in_the_reference() -> None:
    # A tool named like a shell command is never a builtin: the prompt must not offer it.
    leave = ToolSpec("exit", "Leave the shop.", {"type": "object", "properties": {}})
    prompt = system_prompt([leave, USER])
    assert "Leave the shop" not in prompt and "get_user: Fetch one customer." in prompt
