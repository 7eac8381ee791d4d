"""A refused request (4xx) is one line of the web process's log; a server error keeps its
traceback. Every 403 logged a whole traceback: the real errors drowned among them."""

from __future__ import annotations

import logging
import sys

from django.conf import settings

from jazzmine_web.studio.logs import RefusalsInOneLine


def record(status: int) -> logging.LogRecord:
    try:
        raise PermissionError("no")
    except PermissionError:
        info = sys.exc_info()
    made = logging.LogRecord("django.request", logging.WARNING, __file__, 1, "Forbidden", (), info)
    made.status_code = status
    return made


def test_a_refusal_loses_its_traceback_and_an_error_keeps_it() -> None:
    one = RefusalsInOneLine()
    refused, failed = record(403), record(500)
    assert one.filter(refused) and one.filter(failed)
    assert refused.exc_info is None and "Traceback" not in logging.Formatter().format(refused)
    assert failed.exc_info is not None and "Traceback" in logging.Formatter().format(failed)


def test_the_console_of_every_process_filters_so() -> None:
    handler = settings.LOGGING["handlers"]["console"]
    assert "refusals" in handler["filters"]
    root = logging.getLogger()
    assert any(isinstance(f, RefusalsInOneLine) for h in root.handlers for f in h.filters), (
        root.handlers
    )
