"""Forms of the account pages."""

from __future__ import annotations

from django import forms

from .models import ApiToken


class TokenForm(forms.Form):
    """Name a new API token (the name is the person's note of which agent holds it)."""

    name = forms.CharField(
        max_length=ApiToken._meta.get_field("name").max_length, required=False, strip=True
    )
