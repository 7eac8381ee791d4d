"""Template helpers: the review count badge of the navigation bar."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString

from ...studio.highlighting import highlight_code
from ..selectors import pending_review_count

register = template.Library()


@register.inclusion_tag("reviews/_badge.html", takes_context=True)
def review_badge(context: dict[str, Any]) -> dict[str, Any]:
    """Render how many submissions wait for this user's decision."""
    request = context.get("request")
    user = getattr(request, "user", None)
    count = pending_review_count(user) if user is not None else 0
    return {"count": count}


@register.filter
def line_in(number: int, lines: list[int]) -> bool:
    """Tell whether a line number is in a list: `{% if n|line_in:marked %}`."""
    return number in (lines or [])


@register.simple_tag
def highlight_marked(
    code: str, lines: list[int] | None = None, language: str = "python"
) -> SafeString:
    """Highlight a script with line numbers, marking the lines that carry violations."""
    return highlight_code(code or "", language, linenos=True, marked=lines)
