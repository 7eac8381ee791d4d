"""Log filters: what the web process's log says of a request it refused."""

from __future__ import annotations

import logging


class RefusalsInOneLine(logging.Filter):
    """Log a refused request (a 4xx) in one line, without the traceback of its exception.

    Django logs a PermissionDenied or a SuspiciousOperation with its exception: every 403
    filled the log with a traceback, and a person reading it for the one real error (a 5xx,
    kept whole) had to look past them. The line still says the status and the path.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and 400 <= status < 500:
            record.exc_info = None
            record.exc_text = None
        return True
