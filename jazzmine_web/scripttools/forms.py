"""Forms of script tools: the tool itself, trial arguments generated from its schema, uploads."""

from __future__ import annotations

import json
import math
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from jazzmine.jsontext import JSONTextError, json_read, json_shown, leaf_where
from jazzmine.scripttools import RUNTIMES, ScriptTool, ScriptToolError

from ..catalog.forms import (
    ADMIN_ONLY,
    LinesField,
    RequirementsField,
    bound_number_field,
    disable_fields,
)
from ..catalog.models import Sandbox
from ..catalog.services.rules import ADMIN_TOOL_FIELDS

NEW_SCHEMA = {
    "type": "object",
    "properties": {
        "symbol": {
            "type": "string",
            "description": 'Ticker symbol in Yahoo Finance format (e.g. "AAPL", "BTC-USD").',
            "examples": ["AAPL"],
        },
        "period": {
            "type": "integer",
            "description": "Lookback window in trading days, 2 to 200 (typical: 14).",
            "default": 14,
        },
    },
    "required": ["symbol"],
}
NEW_SCRIPT = """#!/usr/bin/env python3
import json
import sys


def main():
    args = json.loads(sys.stdin.read() or "{}")
    symbol = args.get("symbol")
    if not symbol:
        print("missing required parameter: symbol", file=sys.stderr)
        sys.exit(1)
    period = int(args.get("period", 14))
    print(json.dumps({"symbol": symbol, "period": period, "rsi": 50.0}))


if __name__ == "__main__":
    main()
"""


class SchemaField(forms.CharField):
    """A JSON Schema of type object, typed as JSON text."""

    widget = forms.Textarea(attrs={"rows": 14, "class": "code", "spellcheck": "false"})

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, dict):
            return json_shown(value, indent=2)
        return value

    def to_python(self, value: Any) -> dict[str, Any]:  # type: ignore[override]
        text = (super().to_python(value) or "").strip()
        if not text:
            return {"type": "object", "properties": {}, "required": []}
        try:
            data = json_read(text)
        except JSONTextError as exc:
            raise ValidationError(exc.sentence) from None
        if not isinstance(data, dict):
            raise ValidationError("The parameters must be a JSON object (a JSON Schema)")
        return data


class ScriptToolForm(forms.Form):
    """Create or edit a script tool: the fields of tool.json and the script."""

    name = forms.CharField(max_length=64, help_text="snake_case, verb first: calculate_rsi")
    description = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="When to call it, in 60-200 characters of plain English",
    )
    runtime = forms.ChoiceField(
        choices=[(r, f"{r} ({f})") for r, f in RUNTIMES.items()], initial="python3"
    )
    always_allow = forms.BooleanField(
        required=False, help_text="no side effects: scripts calling it skip human review"
    )
    timeout = forms.FloatField(min_value=0.1, initial=300.0, help_text="seconds (spec: 300)")
    parameters = SchemaField(help_text='JSON Schema: {"type": "object", "properties": {...}}')
    secrets = LinesField(required=False, help_text="keychain names the script may read")
    dependencies = RequirementsField(required=False, help_text="pip requirements, one per line")
    source = forms.CharField(
        label="Script",
        strip=False,
        widget=forms.Textarea(attrs={"rows": 20, "class": "code", "spellcheck": "false"}),
    )
    tags = LinesField(required=False, widget=forms.TextInput(), help_text="comma-separated")
    note = forms.CharField(required=False, max_length=300, help_text="what changed")

    def __init__(self, *args: Any, sandbox: Sandbox, extra: dict[str, Any] | None = None,
                 admin: bool = False, **kwargs: Any) -> None:  # fmt: skip
        super().__init__(*args, **kwargs)
        self.sandbox = sandbox
        self.extra = dict(extra or {})
        self.script_tool: ScriptTool | None = None
        bound_number_field(self.fields["timeout"], "script_timeout_seconds")
        # always_allow and secrets change what review means: read-only for members.
        if not admin:
            disable_fields(self, ADMIN_TOOL_FIELDS, ADMIN_ONLY)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        try:
            self.script_tool = ScriptTool(
                name=data["name"],
                description=data["description"],
                source=data["source"],
                parameters=data["parameters"],
                runtime=data["runtime"],
                always_allow=data["always_allow"],
                timeout=float(data["timeout"]),
                secrets=data["secrets"],
                dependencies=data["dependencies"],
                extra=self.extra,
            )
        except ScriptToolError as exc:
            raise ValidationError(exc.problem) from exc
        return data

    @classmethod
    def initial_for(cls, script_tool: ScriptTool, tags: list[str]) -> dict[str, Any]:
        """Return the form's initial values for an existing script tool."""
        return {
            "name": script_tool.name,
            "description": script_tool.description,
            "runtime": script_tool.runtime,
            "always_allow": script_tool.always_allow,
            "timeout": script_tool.timeout,
            "parameters": script_tool.parameters,
            "secrets": script_tool.secrets,
            "dependencies": script_tool.dependencies,
            "source": script_tool.source,
            "tags": ", ".join(tags),
        }


class JsonValueField(forms.CharField):
    """A value of an array or object parameter, typed as JSON."""

    def __init__(self, *args: Any, json_type: str, **kwargs: Any) -> None:
        self.json_type = json_type
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 3, "class": "code"}))
        super().__init__(*args, **kwargs)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, (list, dict)):
            return json_shown(value)
        return value

    def to_python(self, value: Any) -> Any:  # type: ignore[override]
        text = (super().to_python(value) or "").strip()
        if not text:
            return None
        try:
            data = json_read(text)
        except JSONTextError as exc:
            raise ValidationError(exc.sentence) from None
        wanted = list if self.json_type == "array" else dict
        if not isinstance(data, wanted):
            raise ValidationError(f"Give a JSON {self.json_type}")
        # json reads NaN, Infinity and 1e999 (inf), but no JSON column stores them: the
        # trial's row failed the database's check, a 500.
        where = leaf_where(data, _non_finite)
        if where is not None:
            shown = f" (at {where})" if where else ""
            raise ValidationError(f"JSON numbers are finite: no NaN or Infinity{shown}")
        return data


def _non_finite(item: Any) -> bool:
    """Tell whether a JSON leaf is NaN or an infinity."""
    return isinstance(item, float) and not math.isfinite(item)


def _field_for(prop: dict[str, Any], required: bool) -> forms.Field:
    """Return the form field of one schema property."""
    label_help = str(prop.get("description") or "")
    common: dict[str, Any] = {"required": required, "help_text": label_help}
    enum = prop.get("enum")
    type_ = prop.get("type")
    if isinstance(enum, list) and enum:
        choices = [(json.dumps(v), str(v)) for v in enum]
        if not required:
            choices.insert(0, ("", "(leave out)"))
        return forms.TypedChoiceField(choices=choices, coerce=json.loads, empty_value=None,
                                      **common)  # fmt: skip
    if type_ == "integer":
        return forms.IntegerField(**common)
    if type_ == "number":
        return forms.FloatField(**common)
    if type_ == "boolean":
        # A checkbox cannot say "left out": offer the three states.
        choices = [("true", "true"), ("false", "false")]
        if not required:
            choices.insert(0, ("", "(leave out)"))
        return forms.TypedChoiceField(choices=choices, coerce=lambda v: v == "true",
                                      empty_value=None, **common)  # fmt: skip
    if type_ in ("array", "object"):
        return JsonValueField(json_type=type_, **common)
    return forms.CharField(strip=False, **common)


class TrialArgsForm(forms.Form):
    """Trial arguments, one field per schema property; built by `trial_form_for`."""

    def arguments(self) -> dict[str, Any]:
        """Return the arguments to send on stdin, leaving out the empty optional ones."""
        return {
            name: value
            for name, value in self.cleaned_data.items()
            if value is not None and not (value == "" and not self.fields[name].required)
        }


def trial_form_for(script_tool: ScriptTool, data: Any = None) -> TrialArgsForm:
    """Return a form generated from the tool's schema, prefilled from defaults and examples."""
    form = TrialArgsForm(data, prefix="arg")
    required = set(script_tool.required)
    samples = script_tool.sample_args()
    for name, prop in script_tool.properties.items():
        prop = prop if isinstance(prop, dict) else {}
        field = _field_for(prop, name in required)
        field.label = name
        if name in samples:
            value = samples[name]
            if isinstance(field, forms.TypedChoiceField) and prop.get("type") == "boolean":
                value = "true" if value else "false"
            elif isinstance(field, forms.TypedChoiceField):
                value = json.dumps(value)
            field.initial = value
        form.fields[name] = field
    return form


class ScriptToolUploadForm(forms.Form):
    """Import script tools from a zip of `<tool_name>/{tool.json, script.py}` folders."""

    sandbox = forms.ModelChoiceField(queryset=Sandbox.objects.none())
    archive = forms.FileField(help_text="a .zip of <tool_name>/tool.json + script.py folders")

    def __init__(self, *args: Any, sandboxes: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["sandbox"].queryset = sandboxes
