from __future__ import annotations

from django import forms


class LLMSettingsForm(forms.Form):
    """A user's own OpenAI-compatible endpoint."""

    base_url = forms.URLField(
        label="Base URL",
        required=False,
        assume_scheme="http",
        help_text="Up to and including /v1, e.g. http://localhost:11434/v1 for Ollama.",
    )
    model = forms.CharField(required=False, max_length=200)
    api_key = forms.CharField(
        label="API key",
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="Leave empty to keep the stored key. It is stored encrypted and never shown.",
    )
    clear_key = forms.BooleanField(required=False, label="Forget the stored key")
    temperature = forms.FloatField(required=False, min_value=0.0, max_value=2.0)

    def clean(self) -> dict:
        data = super().clean()
        if bool(data.get("base_url")) != bool(data.get("model")):
            raise forms.ValidationError("Set both the base URL and the model, or neither.")
        return data
