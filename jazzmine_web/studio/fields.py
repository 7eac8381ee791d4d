"""Model fields the studio's rows need beyond Django's own."""

from __future__ import annotations

import json
from typing import Any

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper


class OrderedJSONField(models.JSONField):  # type: ignore[type-arg]
    """JSON whose objects keep their keys in the order they were written, on every database.

    PostgreSQL's jsonb stores an object's keys sorted (shortest first). A script tool's JSON
    Schema came back with its properties in another order than its tool.json's, and that
    order is the one its positional arguments take and part of the code an admin accepts:
    read back, a tool an admin had just accepted read as changed, and `rsi("AAPL", 30)` set
    another parameter than on SQLite. Stored there as the JSON text itself, as SQLite stores
    any JSON. Nothing looks inside these columns in SQL (no key lookups on them).
    """

    def db_type(self, connection: BaseDatabaseWrapper) -> str | None:
        if connection.vendor == "postgresql":
            return "text"
        return super().db_type(connection)

    def get_db_prep_value(
        self, value: Any, connection: BaseDatabaseWrapper, prepared: bool = False
    ) -> Any:
        if connection.vendor != "postgresql":
            return super().get_db_prep_value(value, connection, prepared)
        if not prepared:
            value = self.get_prep_value(value)
        return json.dumps(value, cls=self.encoder)
