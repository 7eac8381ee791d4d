"""HTTP conventions shared by the apps' views."""

from __future__ import annotations

# A form that was refused is answered with its own partial, errors in place, as 422: htmx is
# told to swap 422 (templates/_base.html), while django-htmx's debug handler takes over only
# 400/403/404/500 (it would replace the whole page with the bare fragment).
FORM_REFUSED = 422
