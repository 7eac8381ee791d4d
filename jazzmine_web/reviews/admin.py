from __future__ import annotations

from django.contrib import admin

from .models import AuditEntry, SandboxReviewSettings, Submission, WebhookDelivery, WebhookEndpoint


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ["id", "sandbox", "status", "attempt", "agent_name", "created_at", "decided_by"]
    list_filter = ["status", "sandbox"]
    readonly_fields = ["code_sha256", "approved_sha256", "run"]


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    list_display = ["created_at", "sandbox", "action", "actor_label", "code_sha256"]
    list_filter = ["action", "sandbox"]

    def has_change_permission(self, request, obj=None) -> bool:  # type: ignore[no-untyped-def]
        return False  # the audit trail is append-only


admin.site.register(SandboxReviewSettings)
admin.site.register(WebhookEndpoint, list_display=["api_token", "url", "active"])
admin.site.register(WebhookDelivery, list_display=["event", "url", "status", "attempt_count"])
