"""Template helpers: `{{ code|highlight:"python" }}`."""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString

from jazzmine.visible import visible

from ..highlighting import highlight_code

register = template.Library()


@register.filter
def highlight(code: str, language: str = "text") -> SafeString:
    """Highlight code for display."""
    return highlight_code(code or "", language)


@register.filter
def highlight_lines(code: str, language: str = "text") -> SafeString:
    """Highlight code with line numbers."""
    return highlight_code(code or "", language, linenos=True)


@register.filter
def get_item(mapping: dict, key: str) -> object:
    """Look a key up in a dict: `{{ ids|get_item:name }}`."""
    return mapping.get(key) if mapping else None


@register.filter(name="visible")
def visible_filter(text: object) -> str:
    """Write characters a page draws as nothing as their escapes: `{{ submission.task|visible }}`."""
    return visible("" if text is None else str(text))
