"""An admin row out of a staff user's reach is refused, not shown as missing."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Model
from django.http import HttpRequest


class RefusedNotMissing:
    """A row the admin's queryset leaves out is refused (403) by its pages (change, history,
    delete, password), as a row one may see but not change is: "does not exist" would read
    as "deleted"."""

    model: type[Model]

    def get_object(
        self, request: HttpRequest, object_id: str, from_field: str | None = None
    ) -> Any:
        row = super().get_object(request, object_id, from_field)  # type: ignore[misc]
        if row is None and _exists(self.model, object_id, from_field):
            raise PermissionDenied
        return row


def _exists(model: type[Model], object_id: str, from_field: str | None) -> bool:
    """Tell whether any row of the model has this id (or value of `from_field`)."""
    field = model._meta.pk if from_field is None else model._meta.get_field(from_field)
    try:
        value = field.to_python(object_id)
    except (ValidationError, ValueError):
        return False  # no row has it: Django's own "does not exist"
    return model._default_manager.filter(**{field.name: value}).exists()
