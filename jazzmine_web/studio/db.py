"""Database habits of long-lived async requests."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from django.db import connection

F = TypeVar("F", bound=Callable[..., Any])


def released_connection(fn: F) -> F:
    """Give the database connection back after each call (a long request must not hold one).

    A long-poll or a stream reads now and then for minutes; with PostgreSQL's pool, a
    connection kept between reads would be one fewer for everyone else.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        finally:
            if not connection.in_atomic_block:
                connection.close()

    return wrapper  # type: ignore[return-value]
