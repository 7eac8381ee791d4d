"""Template helper of a run's pane: its events, result and status, as the page shows them."""

from __future__ import annotations

from django import template

from ..models import Run
from ..selectors import RunPane, run_pane

register = template.Library()


@register.simple_tag
def run_pane_of(run: Run, pane: RunPane | str | None = None) -> RunPane:
    """Return the pane of a run, unless the caller already read it (and knows its last seq)."""
    # An unset `pane` reaches the tag as the empty string.
    return pane if isinstance(pane, RunPane) and pane.run.pk == run.pk else run_pane(run)
