"""Admin for the catalog; edits go through the services so versions and checksums stay right.

The services check the admin-only fields; that the person is in the team at all is checked
here (`TeamRowsAdmin`), as the studio's pages check it: a staff user sees, changes and picks
the sandboxes of their own teams only. Versions and builds are records, shown and never
deleted on their own (a tool's deletion takes its versions, through its service).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import ForeignKey
from django.http import HttpRequest

from ..studio.readonly_admin import ReadOnlyAdmin, ReadOnlyInline
from ..teams.admin import TeamRowsAdmin
from ..teams.selectors import team_ids_with_role
from . import services
from .models import ImageBuild, Sandbox, SecretValue, Tool, ToolVersion

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


class ToolAdminForm(forms.ModelForm):
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
        try:
            services.tool_fields_check(data, sandbox_name=data["sandbox"].name)
        except ValidationError as exc:
            raise ValidationError(exc.messages) from exc
        return data


class ToolVersionInline(ReadOnlyInline):
    model = ToolVersion
    fields = ["number", "checksum", "author", "created_at", "note"]


@admin.register(Tool)
class ToolAdmin(SandboxRowsAdmin):
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

    def save_model(self, request: HttpRequest, obj: Tool, form: Any, change: bool) -> None:
        # Through the services with the staff user as actor: the admin site is no side door
        # around team roles, versions or the audit.
        data = {f: form.cleaned_data[f] for f in ToolAdminForm.Meta.fields if f != "sandbox"}
        if change:
            original = Tool.objects.get(pk=obj.pk)
            services.tool_update(
                tool=original,
                author=request.user,
                note="Edited in admin",
                actor=request.user,
                **data,
            )
            obj.pk = original.pk
            obj.refresh_from_db()
        else:
            created = services.tool_create(
                sandbox=form.cleaned_data["sandbox"],
                author=request.user,
                note="Created in admin",
                actor=request.user,
                **data,
            )
            obj.pk = created.pk
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
class SandboxAdmin(TeamRowsAdmin):
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
        if change:
            original = Sandbox.objects.get(pk=obj.pk)
            services.sandbox_update(sandbox=original, actor=request.user, **values)
        else:
            created = services.sandbox_create(team=obj.team, actor=request.user, **values)
            obj.pk = created.pk
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
