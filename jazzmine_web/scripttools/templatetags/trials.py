"""Template filters of the script tool pages."""

from __future__ import annotations

from django import template

from ..selectors import trial_status_label

register = template.Library()


@register.filter
def trial_label(status: str) -> str:
    """Return a trial status as people read it (`valid_json` -> `passed: valid JSON`)."""
    return trial_status_label(status)
