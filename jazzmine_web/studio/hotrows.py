"""Reads and conditional updates of a fixed shape, their SQL written once from the models.

A worker's start of a run reads and writes the same few shapes of row every time, and the ORM
compiles each queryset again on every call: a run's claim and its reads spent 1.9 ms of CPU
for 0.2 ms in SQLite, and twice that on a loaded machine, on the way to the run's first
event. Here the SQL of a shape is written once per database from the model's own fields, the
parameters are prepared by those fields, and every column goes through the converters the ORM
itself applies (`SQLCompiler.apply_converters` does the same): what comes back is the
instance the ORM would have built, and the tests compare the two field by field.

Equality filters and plain values only: anything else belongs to the ORM.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Generic, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Field, Model

M = TypeVar("M", bound=Model)


@dataclass(frozen=True)
class _Select:
    sql: str
    # Per column: the converters the ORM applies to it, and the expression they are given.
    columns: tuple[tuple[tuple[Callable[..., Any], ...], Any], ...]


class Rows(Generic[M]):
    """The rows of one model whose `where` fields equal given values, in a fixed order."""

    def __init__(
        self, model: type[M], *, where: Sequence[str], order_by: Sequence[str] = ()
    ) -> None:
        # Fields are looked up on first use: a module may declare its shapes while the
        # models are still loading.
        self.model = model
        self._where_names = tuple(where)
        self._order_names = tuple(order_by)
        self._selects: dict[str, _Select] = {}  # by database alias
        # By database alias and the names set: the statement, and the fields that prepare
        # its values.
        self._updates: dict[tuple[str, tuple[str, ...]], tuple[str, tuple[Field[Any, Any], ...]]]
        self._updates = {}

    @cached_property
    def _fields(self) -> tuple[Field[Any, Any], ...]:
        return tuple(self.model._meta.concrete_fields)

    @cached_property
    def _attnames(self) -> tuple[str, ...]:
        return tuple(field.attname for field in self._fields)

    @cached_property
    def _where(self) -> tuple[Field[Any, Any], ...]:
        return tuple(_column(self.model, name) for name in self._where_names)

    def all(self, *values: Any, using: str = DEFAULT_DB_ALIAS) -> list[M]:
        """Return the rows whose `where` fields equal `values`, as model instances."""
        connection = connections[using]
        select = self._selects.get(using) or self._select(using, connection)
        with connection.cursor() as cursor:
            cursor.execute(select.sql, self._params(connection, values))
            rows = cursor.fetchall()
        return [self._instance(using, connection, select, row) for row in rows]

    def get(self, *values: Any, using: str = DEFAULT_DB_ALIAS) -> M | None:
        """Return the one row whose `where` fields equal `values`, or None."""
        rows = self.all(*values, using=using)
        if len(rows) > 1:
            raise self.model.MultipleObjectsReturned(f"{len(rows)} rows match {values!r}")
        return rows[0] if rows else None

    def update(self, *values: Any, using: str = DEFAULT_DB_ALIAS, **changes: Any) -> int:
        """Set `changes` on the rows whose `where` fields equal `values`; return how many.

        One statement: as a conditional update through the ORM, the database decides
        between two workers that set the same row at once.
        """
        connection = connections[using]
        names = tuple(changes)
        found = self._updates.get((using, names))
        if found is None:
            fields = tuple(_column(self.model, name) for name in names)
            found = self._updates[(using, names)] = (self._update_sql(connection, fields), fields)
        sql, fields = found
        params = [
            field.get_db_prep_save(value, connection)
            for field, value in zip(fields, changes.values(), strict=True)
        ]
        with connection.cursor() as cursor:
            cursor.execute(sql, params + self._params(connection, values))
            return int(cursor.rowcount)

    def _select(self, using: str, connection: BaseDatabaseWrapper) -> _Select:
        qn = connection.ops.quote_name
        table = self.model._meta.db_table
        columns = ", ".join(f"{qn(table)}.{qn(field.column)}" for field in self._fields)
        sql = f"SELECT {columns} FROM {qn(table)}{self._where_sql(connection)}"
        if self._order_names:
            order = (_column(self.model, name) for name in self._order_names)
            sql += " ORDER BY " + ", ".join(qn(field.column) for field in order)
        converted = []
        for field in self._fields:
            column = field.get_col(table)
            found = connection.ops.get_db_converters(column) + field.get_db_converters(connection)
            converted.append((tuple(found), column))
        select = self._selects[using] = _Select(sql, tuple(converted))
        return select

    def _update_sql(
        self, connection: BaseDatabaseWrapper, fields: tuple[Field[Any, Any], ...]
    ) -> str:
        qn = connection.ops.quote_name
        sets = ", ".join(f"{qn(field.column)} = %s" for field in fields)
        table = self.model._meta.db_table
        return f"UPDATE {qn(table)} SET {sets}{self._where_sql(connection)}"

    def _where_sql(self, connection: BaseDatabaseWrapper) -> str:
        qn = connection.ops.quote_name
        if not self._where:
            return ""
        return " WHERE " + " AND ".join(f"{qn(field.column)} = %s" for field in self._where)

    def _params(self, connection: BaseDatabaseWrapper, values: Sequence[Any]) -> list[Any]:
        if len(values) != len(self._where):
            raise TypeError(f"{len(self._where)} values expected, {len(values)} given")
        return [
            field.get_db_prep_value(field.get_prep_value(value), connection, prepared=True)
            for field, value in zip(self._where, values, strict=True)
        ]

    def _instance(
        self, using: str, connection: BaseDatabaseWrapper, select: _Select, row: Sequence[Any]
    ) -> M:
        values = []
        for value, (converters, column) in zip(row, select.columns, strict=True):
            for convert in converters:
                value = convert(value, column, connection)
            values.append(value)
        return self.model.from_db(using, self._attnames, values)


def _column(model: type[Model], name: str) -> Field[Any, Any]:
    """Return a model's field stored in a column of its own table (never a relation's far end)."""
    field = model._meta.get_field(name)
    if not isinstance(field, Field) or not field.concrete or field.many_to_many:
        raise ValueError(f"{model.__name__}.{name} is not a column of its table")
    return field
