from __future__ import annotations

from django.contrib import admin

from .models import Run, RunEvent


class RunEventInline(admin.TabularInline):
    model = RunEvent
    extra = 0
    readonly_fields = ("seq", "type", "data", "ts")
    can_delete = False


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = (
        "short_id",
        "sandbox",
        "status",
        "outcome",
        "source",
        "created_by",
        "created_at",
    )
    list_filter = ("status", "source", "sandbox")
    search_fields = ("id", "task", "code_sha256")
    readonly_fields = [f.name for f in Run._meta.fields]
    inlines = [RunEventInline]

    def has_add_permission(self, request) -> bool:  # runs are made by running scripts
        return False
