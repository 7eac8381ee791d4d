"""HTTP conventions shared by the apps' views."""

from __future__ import annotations

import re
from typing import Any

from django.http import Http404, HttpResponse

# A form that was refused is answered with its own partial, errors in place, as 422: htmx is
# told to swap 422 (templates/_base.html), while django-htmx's debug handler takes over only
# 400/403/404/500 (it would replace the whole page with the bare fragment).
FORM_REFUSED = 422


def form_status(form: Any) -> int:
    """Return the status of a page showing a form: refused once it was posted with errors."""
    return FORM_REFUSED if form.is_bound and form.errors else 200


# RFC 6750's credentials: the scheme, spaces, one b64token, and nothing after it but spaces.
# ASCII only, on purpose: `str.strip()` also drops a no-break space or a Unicode separator, and
# Unicode case folding lets `[a-z]` match the Kelvin sign, so a header no person typed (or one a
# proxy or a log had altered) would have spoken as the token's owner.
_BEARER = re.compile(r"bearer +([A-Za-z0-9\-._~+/]+=*) *", re.ASCII | re.IGNORECASE)


def bearer_token(authorization: str) -> str:
    """Return the token of an `Authorization: Bearer <token>` header, or "" for any other."""
    found = _BEARER.fullmatch(authorization)
    return found[1] if found else ""


def no_content() -> HttpResponse:
    """Return a 204: no body, and so no `Content-Type` to describe one.

    Django gives every response `text/html` unless told otherwise: an agent reading the API,
    whose answers are all JSON, was told to expect HTML in a body there was none of.
    """
    response = HttpResponse(status=204)
    del response["Content-Type"]
    return response


class NotFound(Http404):
    """A 404 that says what is missing, and where to go instead (`studio.views.page_not_found`).

    The generic page read "Nothing is at /playground/": the page was there; the session its
    address named was not. Whatever is the user's business only: a row they may not see reads
    as one that does not exist, so the sentence must not tell them apart.
    """

    def __init__(self, missing: str, *, back: tuple[str, str] | None = None) -> None:
        super().__init__(missing)
        self.missing = missing
        self.back = back  # (address, words) of the page to go on from
