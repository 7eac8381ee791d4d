"""Admin for the catalog; edits go through the services so versions and checksums stay right.

The services check the admin-only fields; that the person is in the team at all is checked
here (`TeamRowsAdmin`), as the studio's pages check it: a staff user sees, changes and picks
the sandboxes of their own teams only. Versions and builds are records, shown and never
deleted on their own (a tool's deletion takes its versions, through its service).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import ForeignKey
from django.http import HttpRequest

from jazzmine.scripttools import ScriptTool, ScriptToolError

from ..studio.checker import CheckerUnavailable
from ..studio.readonly_admin import ReadOnlyAdmin, ReadOnlyInline
from ..teams.admin import TeamRowsAdmin
from ..teams.selectors import team_ids_with_role
from . import services
from .models import ImageBuild, Sandbox, SecretValue, Tool, ToolVersion
from .script_rows import script_tool_from_row

# Offers only the sandboxes or teams of the rows shown: every team's names otherwise.
BY_SANDBOX = ("sandbox", admin.RelatedOnlyFieldListFilter)
BY_TEAM = ("sandbox__team", admin.RelatedOnlyFieldListFilter)


class SandboxRowsAdmin(TeamRowsAdmin):
    """Rows of a sandbox: a staff user sees, and picks, only the sandboxes of their teams."""

    team_path = "sandbox__team"

    def formfield_for_foreignkey(
        self, db_field: ForeignKey, request: HttpRequest, **kwargs: Any
    ) -> Any:
        # A choice a subclass narrowed already (to the sandboxes one administers) stays so.
        superuser = getattr(request.user, "is_superuser", False)
        if db_field.related_model is Sandbox and "queryset" not in kwargs and not superuser:
            kwargs["queryset"] = Sandbox.objects.filter(
                team_id__in=team_ids_with_role(user=request.user)
            ).select_related("team")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class RefusableForm(forms.ModelForm):
    """An admin form whose save a service may refuse: shown again with why (`ServiceSaveAdmin`)."""

    # Why the service refused the save of this very form, when it did.
    refusal: tuple[str, ...] = ()

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not self.errors and self.refusal:
            raise ValidationError(list(self.refusal))
        return data


class SaveRefused(Exception):
    """A service refused to save a row as the admin form said: the form, not a 500, says why."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__(" ".join(messages))
        self.messages = tuple(messages)


# Where a refused save leaves its messages for the page shown again (`ServiceSaveAdmin`).
_REFUSAL = "_jazzmine_admin_refusal"


class ServiceSaveAdmin(admin.ModelAdmin):
    """Saves rows through the services; a save they refuse shows the form again saying why.

    The view's transaction is rolled back first: nothing of the refused save is stored.
    `save_model` raises `SaveRefused`; the form (a `RefusableForm`) then fails its `clean`.
    """

    form = RefusableForm

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        form = super().get_form(request, obj, change, **kwargs)  # a class of this request's
        form.refusal = getattr(request, _REFUSAL, ())
        return form

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> Any:
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except SaveRefused as refused:
            setattr(request, _REFUSAL, refused.messages)
            return super().changeform_view(request, object_id, form_url, extra_context)


class ToolAdminForm(RefusableForm):
    """A tool's fields, checked as the service that saves them checks them.

    A Python tool's as its `@tool` function (`tool_fields_check`); a script tool's as its
    tool.json and script (`script_tool_check`): its script is no Python function, and its
    parameters are its JSON Schema's, so the admin shows both and edits neither (`ToolAdmin`).
    """

    class Meta:
        model = Tool
        fields = [
            "sandbox",
            "name",
            "description",
            "parameters",
            "dependencies",
            "secrets",
            "kind",
            "source",
            "always_allow",
            "tags",
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        # `instance` is the row as stored still: the posted values reach it after `clean`.
        try:
            if self.instance.pk is not None and self.instance.is_script:
                script_tool = script_tool_edited(self.instance, data)
                services.script_tool_check(tool=script_tool, sandbox_name=self.sandbox.name)
            else:
                services.tool_fields_check(data, sandbox_name=self.sandbox.name)
        except REFUSALS as exc:
            raise ValidationError(refusal_messages(exc)) from exc
        return data

    @property
    def sandbox(self) -> Sandbox:
        """The tool's sandbox: its own once it exists (a tool moves to none), else the one picked."""
        if self.instance.pk is not None:
            return self.instance.sandbox
        return self.cleaned_data["sandbox"]


# What a service's refusal of a tool's save may be: a check's (ValidationError, the script
# tool's own), or a checker that could not read the code this time. A PermissionDenied (a member
# writing what only team admins write) stays Django's: a 403.
REFUSALS = (ValidationError, ScriptToolError, CheckerUnavailable)


def refusal_messages(exc: Exception) -> list[str]:
    """Return what a refusal says, as a person reads it."""
    if isinstance(exc, ValidationError):
        return exc.messages
    if isinstance(exc, ScriptToolError):
        return [exc.problem]
    return [str(exc)]


# What a script tool's admin page edits: the fields of its tool.json the admin form shows
# as they are stored, saved through `script_tool_save` as the script tool's own page saves
# them. Its kind, script and JSON Schema (the parameters) are shown and edited there only.
SCRIPT_TOOL_EDITED = ("name", "description", "dependencies", "secrets", "always_allow")
SCRIPT_TOOL_SHOWN = ("kind", "source", "parameters", "runtime", "schema", "timeout_seconds")


def script_tool_edited(row: Tool, data: dict[str, Any]) -> ScriptTool:
    """Return the script tool a row holds, with the admin form's values of its tool.json."""
    current = script_tool_from_row(row)
    if current is None:
        raise ValidationError(
            f"{row.name} is a script tool whose stored tool.json cannot be read; nothing was "
            "changed. Import it again from its tool.json and script."
        )
    changes = {key: data[key] for key in SCRIPT_TOOL_EDITED if key in data}
    for key in ("dependencies", "secrets"):
        if key in changes and not _texts(changes[key]):
            raise ValidationError(f"The {key} of a script tool are a JSON list of text.")
    return dataclasses.replace(current, **changes)  # checked again (`ScriptToolError`)


def _script_tool_edit(row: Tool, data: dict[str, Any], tags: Any) -> bool:
    """Tell whether the admin form changes any field of a script tool it edits."""
    changed = any(key in data and data[key] != getattr(row, key) for key in SCRIPT_TOOL_EDITED)
    return changed or (tags is not None and list(tags) != list(row.tags))


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


class ToolVersionInline(ReadOnlyInline):
    model = ToolVersion
    fields = ["number", "checksum", "author", "created_at", "note"]


@admin.register(Tool)
class ToolAdmin(ServiceSaveAdmin, SandboxRowsAdmin):
    """Tools, saved through the services as the studio's pages save them.

    A tool keeps its kind (a Python tool turned "script" here left a row no registry could
    read: its sandbox lost it and no page could mend it) and its sandbox; a script tool keeps
    its script and schema, edited on its own page, which trial-runs new code before the LLMs
    see it. A save the services refuse shows the form again saying why, with nothing stored.
    """

    form = ToolAdminForm
    list_display = ["name", "sandbox", "kind", "always_allow", "is_always_allowed", "checksum"]
    list_filter = ["kind", "always_allow", BY_TEAM, BY_SANDBOX]
    search_fields = ["name", "description", "tags_index"]
    readonly_fields = [
        "checksum",
        "function_name",
        "is_async",
        "always_allow_accepted_checksum",
        "accepted_code_digest",
        "always_allow_accepted_by",
        "always_allow_accepted_at",
        "created_at",
        "updated_at",
    ]
    inlines = [ToolVersionInline]

    def get_readonly_fields(self, request: HttpRequest, obj: Tool | None = None) -> list[str]:
        # The kind always: a new tool here is a Python one (script tools are made on their
        # own page or imported). An existing tool stays in its sandbox (no service moves one).
        fixed = ["kind"]
        if obj is not None:
            fixed.append("sandbox")
            if obj.is_script:
                fixed.extend(SCRIPT_TOOL_SHOWN)
        return [*dict.fromkeys([*fixed, *self.readonly_fields])]

    def get_fields(self, request: HttpRequest, obj: Tool | None = None) -> list[str]:
        # In the form's order, the read-only ones where they belong, then the records.
        shown = [*ToolAdminForm.Meta.fields]
        if obj is not None and obj.is_script:
            shown.extend(f for f in SCRIPT_TOOL_SHOWN if f not in shown)
        return [*shown, *self.readonly_fields]

    def save_model(self, request: HttpRequest, obj: Tool, form: Any, change: bool) -> None:
        # Through the services with the staff user as actor: the admin site is no side door
        # around team roles, versions or the audit.
        data = {f: form.cleaned_data[f] for f in form.fields if f != "sandbox"}
        try:
            if not change:
                created = services.tool_create(
                    sandbox=form.cleaned_data["sandbox"],
                    author=request.user,
                    note="Created in admin",
                    actor=request.user,
                    **data,
                )
                obj.pk = created.pk
            else:
                original = Tool.objects.get(pk=obj.pk)
                if original.is_script:
                    tags = data.pop("tags", None)
                    if not _script_tool_edit(original, data, tags):
                        # Saved as it was: rebuilt from its row, its schema's properties come
                        # back in PostgreSQL's jsonb key order, and the save made a version.
                        obj.refresh_from_db()
                        return
                    services.script_tool_save(
                        sandbox=original.sandbox,
                        tool=script_tool_edited(original, data),
                        existing=original,
                        author=request.user,
                        note="Edited in admin",
                        tags=tags,
                        actor=request.user,
                    )
                else:
                    services.tool_update(
                        tool=original,
                        author=request.user,
                        note="Edited in admin",
                        actor=request.user,
                        **data,
                    )
        except REFUSALS as exc:
            raise SaveRefused(refusal_messages(exc)) from exc
        obj.refresh_from_db()

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        # A tool's versions go with it, through `tool_delete` (team admins, audited): that
        # none is deleted on its own must not stop the tool's deletion.
        objects, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        return objects, counts, perms_needed - {ToolVersion._meta.verbose_name}, protected

    def delete_model(self, request: HttpRequest, obj: Tool) -> None:
        services.tool_delete(tool=obj, actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for tool in queryset:
            services.tool_delete(tool=tool, actor=request.user)


@admin.register(ToolVersion)
class ToolVersionAdmin(TeamRowsAdmin, ReadOnlyAdmin):
    # Immutable snapshots the history, its diffs and the audit name by number: one deleted
    # here hid a change from the history and gave its number to the next version.
    team_path = "tool__sandbox__team"
    list_display = ["tool", "number", "checksum", "author", "created_at", "note"]
    list_filter = [("tool__sandbox", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["tool__name", "note"]


class SecretValueInline(ReadOnlyInline):
    # Values are written in the sandbox page, encrypted, never shown; cleared there or through
    # SecretValueAdmin (the service: admins, audited).
    model = SecretValue
    fields = ["name", "set_by", "set_at"]


@admin.register(Sandbox)
class SandboxAdmin(ServiceSaveAdmin, TeamRowsAdmin):
    list_display = ["name", "team", "backend", "network", "base_image", "updated_at"]
    list_filter = [("team", admin.RelatedOnlyFieldListFilter), "backend", "network"]
    search_fields = ["name", "description"]
    readonly_fields = [
        "accepted_dependencies",
        "accepted_dependencies_by",
        "accepted_dependencies_at",
    ]
    inlines = [SecretValueInline]

    def save_model(self, request: HttpRequest, obj: Sandbox, form: Any, change: bool) -> None:
        # Through the services: team roles, requirement, image and bound checks, the audit.
        keys = ["name", "description", *services.SANDBOX_CONFIG_FIELDS, *services.BASH_LIMIT_FIELDS]
        values = {k: getattr(obj, k) for k in keys}
        try:
            if change:
                original = Sandbox.objects.get(pk=obj.pk)
                services.sandbox_update(sandbox=original, actor=request.user, **values)
            else:
                created = services.sandbox_create(team=obj.team, actor=request.user, **values)
                obj.pk = created.pk
        except ValidationError as exc:
            raise SaveRefused(exc.messages) from exc
        obj.refresh_from_db()

    def delete_model(self, request: HttpRequest, obj: Sandbox) -> None:
        services.sandbox_delete(sandbox=obj, actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for sandbox in queryset:
            services.sandbox_delete(sandbox=sandbox, actor=request.user)


@admin.register(SecretValue)
class SecretValueAdmin(SandboxRowsAdmin):
    list_display = ["name", "sandbox", "set_by", "set_at"]
    list_filter = [BY_TEAM]
    fields = ["sandbox", "name", "set_by", "set_at"]
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    # Through the service: clearing a secret changes what a run may reach (admins, audited).
    def delete_model(self, request: HttpRequest, obj: SecretValue) -> None:
        services.secret_value_clear(sandbox=obj.sandbox, name=obj.name, actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for secret in queryset.select_related("sandbox", "sandbox__team"):
            services.secret_value_clear(
                sandbox=secret.sandbox, name=secret.name, actor=request.user
            )


@admin.register(ImageBuild)
class ImageBuildAdmin(SandboxRowsAdmin, ReadOnlyAdmin):
    # A build is its worker's, as a run is: one deleted here went from under the worker
    # building it, and took the record of the wheels an admin's Accept binds.
    list_display = ["pk", "sandbox", "status", "checksum", "built", "created_at", "finished_at"]
    list_filter = ["status", BY_TEAM]
