from __future__ import annotations

from django import forms

from jazzmine.llm import LLMConfigError
from jazzmine.llm.config import base_url_check
from jazzmine.net import OutboundHostNotPublic, OutboundURLRefused, url_check

from ..studio.outbound import outbound_policy
from .models import LLMSettings


class LLMSettingsForm(forms.Form):
    """A user's own OpenAI-compatible endpoint."""

    base_url = forms.URLField(
        label="Base URL",
        required=False,
        assume_scheme="http",
        # The column's own length: a longer URL passed the form and PostgreSQL refused the row.
        max_length=LLMSettings._meta.get_field("base_url").max_length,
        help_text="Up to and including /v1, e.g. http://localhost:11434/v1 for Ollama.",
    )
    model = forms.CharField(
        required=False, max_length=LLMSettings._meta.get_field("model").max_length
    )
    api_key = forms.CharField(
        label="API key",
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="Leave empty to keep the stored key. It is stored encrypted and never shown.",
    )
    clear_key = forms.BooleanField(required=False, label="Forget the stored key")
    temperature = forms.FloatField(required=False, min_value=0.0, max_value=2.0)

    def clean_base_url(self) -> str:
        """Refuse an endpoint on an internal address unless the deployment allows its host."""
        url = self.cleaned_data.get("base_url") or ""
        if not url:
            return url
        try:
            base_url_check(url)
        except LLMConfigError as exc:
            raise forms.ValidationError(str(exc)) from None
        try:
            url_check(url, policy=outbound_policy())
        except OutboundHostNotPublic as exc:
            raise forms.ValidationError(
                f"{exc} A local model server can be allowed by the deployment "
                "(JAZZMINE_OUTBOUND_ALLOWED_HOSTS, e.g. 127.0.0.1:11434)."
            ) from None
        except OutboundURLRefused as exc:
            raise forms.ValidationError(str(exc)) from None
        return url

    def clean(self) -> dict:
        data = super().clean()
        if self.has_error("base_url") or self.has_error("model"):
            return data  # a refused URL is not a missing one: its own error says what to do
        if bool(data.get("base_url")) != bool(data.get("model")):
            raise forms.ValidationError("Set both the base URL and the model, or neither.")
        return data
