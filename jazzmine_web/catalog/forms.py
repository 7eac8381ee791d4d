"""Forms of the catalog pages; validation defers to the core types through the services."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator

from jazzmine.jsontext import JSONTextError, json_read
from jazzmine.requirements import RequirementError, requirement_check

from ..teams.models import Team
from . import services
from .limits import bound, number_text
from .models import Backend, Sandbox, ToolKind
from .services.rules import MAX_TOOL_DESCRIPTION_CHARS


class LinesField(forms.CharField):
    """A list of strings typed one per line (commas work too)."""

    widget = forms.Textarea(attrs={"rows": 3})

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list):
            return "\n".join(value)
        return value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        if isinstance(value, list):  # a disabled field's initial value
            return list(value)
        text = super().to_python(value) or ""
        items = [part.strip() for line in text.splitlines() for part in line.split(",")]
        return [item for item in items if item]


class RequirementsField(LinesField):
    """pip requirements typed one per line; each must be a plain PEP 508 requirement.

    Lines are not split at commas: `numpy>=1,<2` is one requirement.
    """

    widget = forms.Textarea(attrs={"rows": 3, "spellcheck": "false"})

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        if isinstance(value, list):  # a disabled field's initial value
            return list(value)
        text = forms.CharField.to_python(self, value) or ""
        requirements = []
        # Only "\n" ends a line: a tab, "\r" or form feed inside one is refused, not split.
        for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
            if not line.strip(" "):
                continue
            try:
                requirements.append(requirement_check(line))
            except RequirementError as exc:
                raise ValidationError(f"line {number}: {exc}") from None
        return requirements


def bound_number_field(field: forms.Field, name: str) -> None:
    """Give a number field the deployment's bounds (read now, so settings apply per request)."""
    limits = bound(name)
    # Bounds are floats; a whole-number field says them as whole numbers ("at most 52428800",
    # not 52428800.0), in its error and in the browser's own.
    whole = isinstance(field, forms.IntegerField) and not isinstance(field, forms.FloatField)
    low, high = (
        (int(limits.minimum), int(limits.maximum)) if whole else (limits.minimum, limits.maximum)
    )
    field.validators = [
        v for v in field.validators if not isinstance(v, (MinValueValidator, MaxValueValidator))
    ]
    field.validators += [MinValueValidator(low), MaxValueValidator(high)]
    field.widget.attrs.update(min=low, max=high)
    field.help_text = (
        f"{field.help_text}; " if field.help_text else ""
    ) + f"between {number_text(limits.minimum)} and {number_text(limits.maximum)}"


def disable_fields(form: forms.Form, names: Any, why: str) -> None:
    """Show fields read-only; Django then ignores whatever a crafted post sends for them."""
    for name in names:
        if name in form.fields:
            form.fields[name].disabled = True
            form.fields[name].help_text = why


ADMIN_ONLY = "team admins only"


class SandboxForm(forms.Form):
    """Create or edit a sandbox."""

    team = forms.ModelChoiceField(queryset=Team.objects.none())
    name = forms.CharField(max_length=63, help_text="lowercase letters, digits, '-' or '_'")
    description = forms.CharField(
        required=False,
        max_length=MAX_TOOL_DESCRIPTION_CHARS,
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    dependencies = RequirementsField(
        required=False,
        help_text=(
            "pip requirements, one per line; their code loads into every run, so no secret "
            "reaches runs until a team admin accepts what anyone else adds"
        ),
    )
    secrets = LinesField(required=False, help_text="environment variable names, one per line")
    network = forms.BooleanField(required=False, help_text="allow network access in runs")
    # Labels of their own: the ones Django makes from the names read "Memory mb" and "Cpus".
    memory_mb = forms.IntegerField(min_value=1, initial=256, label="Memory (MB)")
    cpus = forms.FloatField(min_value=0.01, initial=1.0, label="CPUs")
    pids_limit = forms.IntegerField(min_value=1, initial=128, label="PIDs limit")
    timeout_seconds = forms.FloatField(min_value=0.1, initial=30.0, label="Timeout (seconds)")
    max_output_bytes = forms.IntegerField(
        min_value=1, initial=1_000_000, label="Max output (bytes)"
    )
    base_image = forms.ChoiceField(choices=[], help_text="the images your operator offers")
    backend = forms.ChoiceField(
        choices=Backend.choices,
        initial=Backend.DOCKER,
        help_text="bubblewrap runs without Docker, limited by a cgroup per run: its worker "
        "needs root or a delegated cgroup, or the run is refused (never run unlimited); it has "
        "no network to give",
    )
    bash_max_commands = forms.IntegerField(
        min_value=1, required=False, initial=10_000, help_text="bash scripts: commands per run"
    )
    bash_max_loop_iterations = forms.IntegerField(
        min_value=1, required=False, initial=10_000, help_text="bash scripts: iterations per loop"
    )
    bash_timeout_seconds = forms.FloatField(
        min_value=0.1, required=False, initial=30.0, help_text="bash scripts: seconds per run"
    )

    def __init__(
        self,
        *args: Any,
        teams: Any,
        instance: Sandbox | None = None,
        admin: bool = False,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams
        if teams.count() == 1:
            self.fields["team"].initial = teams.first()
        self.instance = instance
        if instance is not None:
            del self.fields["team"]
        offered = services.base_images_allowed()
        choices = [(image, image) for image in offered]
        if instance is not None and instance.base_image not in offered:
            # An older sandbox keeps its image until someone changes it.
            choices.append((instance.base_image, f"{instance.base_image} (no longer offered)"))
        self.fields["base_image"].choices = choices
        for name in services.BOUNDED_SANDBOX_FIELDS:
            bound_number_field(self.fields[name], name)
        if not admin:
            disable_fields(self, services.ADMIN_SANDBOX_FIELDS, ADMIN_ONLY)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        config = {f: data[f] for f in services.SANDBOX_CONFIG_FIELDS}
        try:
            services.sandbox_config_check(name=data["name"], **config)
        except ValidationError as exc:
            raise ValidationError(exc.messages) from exc
        return data

    def config_values(self) -> dict[str, Any]:
        """Return the cleaned fields the services take."""
        keys = ("name", "description", *services.SANDBOX_CONFIG_FIELDS)
        values = {k: self.cleaned_data[k] for k in keys}
        # Older callers post no bash limits: keep what the sandbox has then.
        for key in services.BASH_LIMIT_FIELDS:
            if self.cleaned_data.get(key) is not None:
                values[key] = self.cleaned_data[key]
        return values


class JsonListField(forms.CharField):
    """A JSON list of objects (the tool's parameters)."""

    widget = forms.Textarea(attrs={"rows": 8, "class": "code"})

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list):
            return json.dumps(value, indent=2)
        return value

    def to_python(self, value: Any) -> list[dict[str, Any]]:  # type: ignore[override]
        text = (super().to_python(value) or "").strip()
        if not text:
            return []
        try:
            parsed = json_read(text)
        except JSONTextError as exc:
            raise ValidationError(exc.sentence) from None
        if not isinstance(parsed, list) or not all(isinstance(p, dict) for p in parsed):
            raise ValidationError("Give a JSON list of parameter objects")
        return parsed


class ToolForm(forms.Form):
    """Create or edit a tool."""

    name = forms.CharField(max_length=100)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}))
    parameters = JsonListField(
        required=False,
        help_text="JSON list; keys: name, type, description, default, required, options, "
        'examples, source ("context", "history" or "all"), display_name',
    )
    dependencies = RequirementsField(required=False, help_text="pip requirements, one per line")
    secrets = LinesField(required=False, help_text="environment variable names, one per line")
    source = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 16, "class": "code"}),
        help_text="one function; its imports, constants and helpers go inside it: only the "
        "function's own code runs in the sandbox",
    )
    kind = forms.ChoiceField(choices=ToolKind.choices, initial=ToolKind.PYTHON)
    always_allow = forms.BooleanField(required=False)
    tags = LinesField(required=False, widget=forms.TextInput(), help_text="comma-separated")
    note = forms.CharField(
        required=False, max_length=300, help_text="what changed and why; kept with the new version"
    )

    def __init__(self, *args: Any, sandbox: Sandbox, admin: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sandbox = sandbox
        if not admin:
            disable_fields(self, services.ADMIN_TOOL_FIELDS, ADMIN_ONLY)

    def clean_kind(self) -> str:
        kind = self.cleaned_data["kind"]
        if kind != ToolKind.PYTHON:
            raise ValidationError("Script tools cannot be edited here yet")
        return kind

    # Fields the source's read cannot go without; any other field's error leaves it readable.
    READ_NEEDS = ("description", "parameters", "source", "kind")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if any(name in self.errors for name in self.READ_NEEDS):
            return data
        # A field refused on its own (a dependency that is no requirement, a bad name) does not
        # keep the source's own problems from being said with it: read without that field.
        fields = dict(data)
        fields.update({name: ([] if name in ("dependencies", "secrets") else "")
                       for name in self.errors})  # fmt: skip
        try:
            services.tool_fields_check(fields, sandbox_name=self.sandbox.name)
        except ValidationError as exc:
            raise ValidationError(exc.messages) from exc
        return data

    def tool_values(self) -> dict[str, Any]:
        """Return the cleaned fields the services take."""
        keys = ("name", "description", "parameters", "dependencies", "secrets", "source")
        values = {k: self.cleaned_data[k] for k in keys}
        values.update(
            always_allow=self.cleaned_data["always_allow"],
            tags=self.cleaned_data["tags"],
            kind=self.cleaned_data["kind"],
        )
        return values


class SecretValueForm(forms.Form):
    """Set one secret's value; the field never shows what is stored."""

    name = forms.CharField(widget=forms.HiddenInput())
    value = forms.CharField(
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        required=False,
        strip=False,
    )
    clear = forms.BooleanField(required=False)


class ImportForm(forms.Form):
    """Import tools from uploaded `.py` files."""

    team = forms.ModelChoiceField(queryset=Team.objects.none())
    sandbox = forms.CharField(
        required=False,
        max_length=63,
        help_text="Put every tool into this sandbox; leave empty to follow each @tool(sandbox=...)",
    )

    def __init__(self, *args: Any, teams: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams
        if teams.count() == 1:
            self.fields["team"].initial = teams.first()
