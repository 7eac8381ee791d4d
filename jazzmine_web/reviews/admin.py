"""Admin for reviews: read-only records, and the review policy changed only through its service.

The admin site is no side door around team roles or the audit (as in `catalog/admin.py`): a
sandbox's review policy is set by `review_settings_set` with the staff user as actor, so only a
team admin (or a superuser) changes it, and the change is audited. Submissions, decisions, the
audit trail and webhook deliveries are records of what happened: they are shown, never edited.
A staff user sees those of their own teams' sandboxes, and the webhooks of their own tokens.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest

from ..catalog.admin import BY_SANDBOX, BY_TEAM, SandboxRowsAdmin
from ..catalog.models import Sandbox
from ..catalog.services import actor_is_admin
from ..studio.readonly_admin import ReadOnlyAdmin, ReadOnlyInline
from ..teams.admin import OwnRowsAdmin
from ..teams.models import Role
from ..teams.selectors import team_ids_with_role
from . import services
from .models import (
    AuditEntry,
    SandboxReviewSettings,
    Submission,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
)

# The service's bounds, checked here too so that the admin shows a form error, not a 500.
MIN_TIMEOUT_SECONDS = 10
MAX_TIMEOUT_SECONDS = 30 * 86400


@admin.register(Submission)
class SubmissionAdmin(SandboxRowsAdmin, ReadOnlyAdmin):
    # A pending submission's body is what a reviewer approves; decisions are the review
    # pages' (who decides, not own, audited); deleting one would take its audit with it.
    list_display = ["id", "sandbox", "status", "attempt", "agent_name", "created_at", "decided_by"]
    list_filter = ["status", BY_SANDBOX]


@admin.register(AuditEntry)
class AuditEntryAdmin(SandboxRowsAdmin, ReadOnlyAdmin):
    # The audit trail is append-only, and only the services append to it.
    list_display = ["created_at", "sandbox", "action", "actor_label", "code_sha256"]
    list_filter = ["action", BY_SANDBOX]


class SandboxReviewSettingsForm(forms.ModelForm):
    class Meta:
        model = SandboxReviewSettings
        fields = ["sandbox", "policy", "timeout_seconds"]

    def clean_timeout_seconds(self) -> int:
        value = self.cleaned_data["timeout_seconds"]
        if not MIN_TIMEOUT_SECONDS <= value <= MAX_TIMEOUT_SECONDS:
            raise ValidationError("The review timeout must be between 10 seconds and 30 days.")
        return value


@admin.register(SandboxReviewSettings)
class SandboxReviewSettingsAdmin(SandboxRowsAdmin):
    form = SandboxReviewSettingsForm
    list_display = ["sandbox", "policy", "timeout_seconds", "updated_by", "updated_at"]
    list_filter = ["policy", BY_TEAM]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        # A row is its sandbox's: moving it would change another sandbox's review unaudited.
        fixed = ["updated_by", "updated_at"]
        return ["sandbox", *fixed] if obj is not None else fixed

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # A staff user with the model permission still needs to be an admin of the team.
        if not super().has_change_permission(request, obj):
            return False
        return obj is None or actor_is_admin(actor=request.user, team=obj.sandbox.team)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Deleting the row would reset the policy without an audit entry: change it instead.
        return False

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "sandbox":
            kwargs["queryset"] = _admin_sandboxes(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(
        self, request: HttpRequest, obj: SandboxReviewSettings, form: Any, change: bool
    ) -> None:
        # Through the service with the staff user as actor: team roles and the audit apply.
        try:
            row = services.review_settings_set(
                sandbox=obj.sandbox,  # read-only once the row exists: the one it was made for
                user=request.user,
                policy=form.cleaned_data["policy"],
                timeout_seconds=form.cleaned_data["timeout_seconds"],
            )
        except services.ReviewForbidden as exc:
            raise PermissionDenied(exc.message) from exc
        obj.pk = row.pk
        obj.refresh_from_db()

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        raise PermissionDenied("Change a sandbox's review policy instead of deleting it.")


def _admin_sandboxes(user: Any) -> QuerySet[Sandbox]:
    """Return the sandboxes whose review policy this person may set."""
    if getattr(user, "is_superuser", False):
        return Sandbox.objects.select_related("team")
    return Sandbox.objects.filter(
        team_id__in=team_ids_with_role(user=user, role=Role.ADMIN)
    ).select_related("team")


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(OwnRowsAdmin, ReadOnlyAdmin):
    # Set by the token's owner through `webhook_set` (URL checks, a fresh secret shown once);
    # here the URL could point elsewhere unchecked, or a revoked token's webhook come back.
    # Deleting one only stops deliveries, as `webhook_clear` does: the owner's (a superuser's
    # any), as in the studio.
    owner_path = "api_token__user"
    list_display = ["api_token", "url", "active", "updated_at"]
    list_filter = ["active"]
    exclude = ["secret_ciphertext"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in WebhookEndpoint._meta.fields if f.name != "secret_ciphertext"]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return admin.ModelAdmin.has_delete_permission(self, request, obj)


class WebhookAttemptInline(ReadOnlyInline):
    model = WebhookAttempt
    fields = ["number", "started_at", "status_code", "error", "duration_ms"]


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(OwnRowsAdmin, ReadOnlyAdmin):
    # A delivery added or edited here would POST a body of one's choosing, signed with the
    # token's secret, to a URL of one's choosing. Its body tells of a submission: the token
    # owner's to read, as the webhook's.
    owner_path = "endpoint__api_token__user"
    list_display = ["event", "url", "status", "attempt_count", "cancel_reason", "created_at"]
    list_filter = ["status", "event"]
    inlines = [WebhookAttemptInline]
