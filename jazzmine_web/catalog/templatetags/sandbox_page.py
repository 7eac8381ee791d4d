"""Template helpers of the sandbox page: the image's true state, and what can be exported."""

from __future__ import annotations

from typing import Any

from django import template

from ..image_truth import ImageTruth, image_truth
from ..models import Sandbox
from ..selectors import ImageStatus

register = template.Library()


@register.simple_tag
def image_truth_of(sandbox: Sandbox, image: ImageStatus | ImageTruth) -> ImageTruth:
    """Return the image's state as the page tells it (build rows checked against the engine)."""
    if isinstance(image, ImageTruth):
        return image  # already told (the build socket's fragments)
    return image_truth(sandbox, image)


@register.filter
def script_tool_rows(tools: list[tuple[Any, Any]]) -> list[Any]:
    """Return the catalog rows of the script tools in the page's `(tool, row)` pairs."""
    return [row for _tool, row in tools if getattr(row, "is_script", False)]
