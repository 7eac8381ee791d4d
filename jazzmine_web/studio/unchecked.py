"""A request whose code the checker process could not read is answered 503, saying why.

Big untrusted code is read in the checker process (`studio.checker`), never in the web
process: a script on its way to a run, a tool's source on a save, a sandbox's registry for a
page or a run. Paths that store something catch `CheckerUnavailable` themselves and refuse
what they were asked; any other (a page that builds a registry) ends here, not in a 500.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.utils.deprecation import MiddlewareMixin

from .checker import CheckerUnavailable
from .refusals import refusal_response


class CheckerUnavailableMiddleware(MiddlewareMixin):
    """Answer a `CheckerUnavailable` a view raised with a 503 that says what to do."""

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, CheckerUnavailable):
            return None
        return refusal_response(
            request.path,
            status=503,
            code="code_unchecked",
            message=f"The code this needs could not be read: {exception.why}. Try again.",
        )
