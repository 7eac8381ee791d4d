from __future__ import annotations

from django.contrib import admin

from .models import Attempt, LLMSettings, PlaygroundSession


class AttemptInline(admin.TabularInline):
    model = Attempt
    extra = 0
    fields = ("number", "source", "status", "run", "generation_seconds", "completion_tokens")
    readonly_fields = fields


@admin.register(PlaygroundSession)
class PlaygroundSessionAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "sandbox", "task", "updated_at")
    inlines = [AttemptInline]


@admin.register(LLMSettings)
class LLMSettingsAdmin(admin.ModelAdmin):
    list_display = ("user", "base_url", "model", "updated_at")
    exclude = ("api_key_ciphertext",)
