"""What a browser posts to an admin change page: the form as its page fills it in."""

from __future__ import annotations

from typing import Any

from django.test import Client


def admin_form(client: Client, url: str, **changes: Any) -> dict[str, Any]:
    """Return the admin form at `url` as its page fills it in (its inlines too), with
    `changes` typed over it: what a browser posts."""
    page = client.get(url)
    assert page.status_code == 200, page.status_code
    forms = [page.context["adminform"].form]
    for inline in page.context["inline_admin_formsets"]:
        forms.extend([inline.formset.management_form, *inline.formset.forms])
    data: dict[str, Any] = {}
    for form in forms:
        for field in form:
            value = field.value()  # as the widget renders it
            if value is True:
                data[field.html_name] = "on"
            elif value is not None and value is not False:
                data[field.html_name] = value
    data.update(changes)
    return data
