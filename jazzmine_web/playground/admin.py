"""Admin for the playground: sessions and LLM settings are shown, never edited here.

A session re-pointed here at another user or sandbox would hand its attempts (scripts and
prompts) to someone else; a user's LLM endpoint changed here would send their API key where
the staff user says, past the outbound URL checks of the settings page. A staff user sees the
sessions in their own teams' sandboxes, and their own LLM settings.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from ..catalog.admin import SandboxRowsAdmin
from ..studio.readonly_admin import ReadOnlyInline
from ..teams.admin import OwnRowsAdmin
from .models import Attempt, LLMSettings, PlaygroundSession


class AttemptInline(ReadOnlyInline):
    model = Attempt
    fields = ("number", "source", "status", "run", "generation_seconds", "completion_tokens")


@admin.register(PlaygroundSession)
class PlaygroundSessionAdmin(SandboxRowsAdmin):
    list_display = ("id", "user", "sandbox", "task", "updated_at")
    inlines = [AttemptInline]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in PlaygroundSession._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # sessions are opened on the playground page, in sandboxes one may see


@admin.register(LLMSettings)
class LLMSettingsAdmin(OwnRowsAdmin):
    list_display = ("user", "base_url", "model", "updated_at")
    exclude = ("api_key_ciphertext",)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in LLMSettings._meta.fields if f.name != "api_key_ciphertext"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # each user sets their own, on the LLM settings page
