"""Database habits of long-lived async requests."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.exceptions import ValidationError
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import Model

F = TypeVar("F", bound=Callable[..., Any])

# What the database raises when it does not answer (stopped, restarting, no connection free
# within the pool's timeout), as opposed to refusing what it was given: the same write may
# succeed once it answers again.
DATABASE_UNREACHABLE = (OperationalError, InterfaceError)


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


def row_current(instance: Model) -> None:
    """Read a row again as it is committed now, and hold it until the transaction ends.

    Call inside `transaction.atomic()`, before a service checks and writes a row it was given.
    That instance was read when the request began; another person's change committed since
    (an admin's narrower network, wheel files an admin just accepted) would be undone
    without a word by the whole-row save of an edit that never touched it, and a row deleted
    meanwhile would be inserted again by that save, empty of its tools. Held (PostgreSQL:
    FOR UPDATE; SQLite: the IMMEDIATE transaction holds the write lock from its start), the
    checks and the write see one row that nobody changes in between.
    """
    model = type(instance)
    if not model.objects.select_for_update().filter(pk=instance.pk).exists():
        raise ValidationError(
            f"This {model._meta.verbose_name} was deleted meanwhile; nothing was changed."
        )
    instance.refresh_from_db()


def holds_row(argument: str) -> Callable[[F], F]:
    """Run a service in one transaction, on the current row of its `argument` held (`row_current`).

    For the services that check a row and write it back: an edit, an acceptance. None (a
    create through the same service) holds nothing.
    """

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with transaction.atomic():
                instance = kwargs.get(argument)
                if instance is not None:
                    row_current(instance)
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
