"""The importer stores each `@tool` function whole, as Python reads it, whatever characters the
module holds around it.

It cut a tool's lines from the module with `str.splitlines`, which also breaks at a form feed
(PEP 8's page break), a vertical tab, \\x1c-\\x1e, \\x85 and U+2028/9, none of which ends a line
for Python: one of them above a tool (a comment is enough) moved every later tool's cut by a
line, so the tool stored lost its last lines (the stored code was not the function in the file,
nor what an admin read there), or was refused as invalid Python.
"""

from __future__ import annotations

import pytest

from jazzmine_web.catalog.importer import parse_files
from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import tools_import
from tests.web.helpers import source_file

pytestmark = pytest.mark.django_db

TOOL = (
    "@tool(description='Refund an order, at most 100 a time.')\n"
    "def refund(order_id: str, amount: float) -> ToolResponse:\n"
    "    if amount > 100:\n"
    "        return ToolResponse(success=False, message='too much')\n"
    "    return ToolResponse(success=True, data={'refunded': amount})\n"
)
BREAKS = ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("char", BREAKS, ids=[f"U+{ord(c):04X}" for c in BREAKS])
def test_a_tool_below_a_character_splitlines_breaks_at_is_read_whole(char) -> None:
    module = f"from jazzmine.core.tools import tool  # page one{char}page two\n\n\n{TOOL}"
    parsed = parse_files([source_file("orders.py", module)])
    assert parsed.tools[0].source == TOOL.split("\n", 1)[1]


def test_it_is_imported_as_written(team, user) -> None:
    module = f"from jazzmine.core.tools import tool\n\x0c\n\n{TOOL}"
    tools_import(team=team, files=[source_file("orders.py", module)], author=user)
    assert Tool.objects.get(name="refund").source == TOOL.split("\n", 1)[1]
