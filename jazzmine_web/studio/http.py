"""HTTP conventions shared by the apps' views."""

from __future__ import annotations

from typing import Any

# A form that was refused is answered with its own partial, errors in place, as 422: htmx is
# told to swap 422 (templates/_base.html), while django-htmx's debug handler takes over only
# 400/403/404/500 (it would replace the whole page with the bare fragment).
FORM_REFUSED = 422


def form_status(form: Any) -> int:
    """Return the status of a page showing a form: refused once it was posted with errors."""
    return FORM_REFUSED if form.is_bound and form.errors else 200
