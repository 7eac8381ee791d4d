"""Admin for runs: shown, never made, changed or deleted here (a run's state is its worker's).

A staff user sees the runs of their own teams' sandboxes (their code and events), as the studio
shows them.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from ..catalog.admin import BY_SANDBOX, SandboxRowsAdmin
from ..studio.readonly_admin import ReadOnlyInline
from .models import Run, RunEvent


class RunEventInline(ReadOnlyInline):
    # Events come from the sandbox, stored by the worker in order.
    model = RunEvent
    fields = ("seq", "type", "data", "ts")


@admin.register(Run)
class RunAdmin(SandboxRowsAdmin):
    list_display = (
        "short_id",
        "sandbox",
        "status",
        "outcome",
        "source",
        "created_by",
        "created_at",
    )
    list_filter = ("status", "source", BY_SANDBOX)
    search_fields = ("id", "task", "code_sha256")
    readonly_fields = [f.name for f in Run._meta.fields]
    inlines = [RunEventInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # runs are made by running scripts

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Every field is read-only, yet a save writes back the whole row as the page read it:
        # a press while its worker ended the run wrote `running` (and an old heartbeat) over
        # the end. Shown only (a view or change permission shows it).
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # A run may be held by a worker, and is what an approved submission ran: cancel it
        # on its page instead (audited), never remove it from under them.
        return False
