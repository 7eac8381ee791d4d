"""Tools in a real file for registry tests; registered onto registries the tests create."""

from __future__ import annotations

from jazzmine.core.tools import ToolParameter, ToolResponse


def get_user(user_id: str) -> ToolResponse:
    """Return a user."""
    return ToolResponse(success=True, data={"id": user_id, "name": "Ada"})


async def fetch_rates(currency: str = "EUR") -> ToolResponse:
    return ToolResponse(success=True, data={"currency": currency, "rate": 1.1})


def no_hint(x):
    return ToolResponse(success=True, data={"x": x})


class Holder:
    def method_tool(self, q: str) -> ToolResponse:
        return ToolResponse(success=True, data={"q": q})


USER_PARAM = ToolParameter("user_id", "str", "The user's id", required=True)
