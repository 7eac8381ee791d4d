"""A tool in a real file, so the registry can extract its source."""

from __future__ import annotations

from jazzmine.core.tools import ToolResponse


def get_orders(user_id: str) -> ToolResponse:
    """Return a user's orders."""
    return ToolResponse(success=True, data={"orders": [{"id": 1, "total": 9.5}]})
