"""Human review of agent-written scripts: submissions, per-sandbox policy, audit, webhooks."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from ..catalog.models import Sandbox
from ..runs.models import Language, Run
from ..teams.models import ApiToken


class ReviewPolicy(models.TextChoices):
    ALWAYS = "always", "Review every script"
    UNLISTED_TOOLS = "unlisted_tools", "Review when a tool that is not always-allowed is called"
    NEVER = "never", "Never review (trusted automation)"


DEFAULT_REVIEW_TIMEOUT_SECONDS = 3600


class SandboxReviewSettings(models.Model):
    """How a sandbox's agent submissions are reviewed; a sandbox without a row uses defaults."""

    sandbox = models.OneToOneField(
        Sandbox, on_delete=models.CASCADE, primary_key=True, related_name="review_settings"
    )
    policy = models.CharField(
        max_length=20, choices=ReviewPolicy.choices, default=ReviewPolicy.ALWAYS
    )
    timeout_seconds = models.PositiveIntegerField(
        default=DEFAULT_REVIEW_TIMEOUT_SECONDS,
        help_text="Submissions not decided within this many seconds expire (and never run).",
    )
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        verbose_name_plural = "sandbox review settings"  # not "settingss"

    def __str__(self) -> str:
        return f"review settings of {self.sandbox}"


class SubmissionStatus(models.TextChoices):
    REJECTED_BY_VALIDATOR = "rejected_by_validator", "Rejected by the validator"
    PENDING = "pending", "Waiting for review"
    APPROVED = "approved", "Approved"
    EDITED_AND_APPROVED = "edited_and_approved", "Edited and approved"
    REJECTED = "rejected", "Rejected"
    EXPIRED = "expired", "Expired"
    AUTO_APPROVED = "auto_approved", "Approved by policy"
    WITHDRAWN = "withdrawn", "Withdrawn by its agent"

    @classmethod
    def approved(cls) -> tuple[str, ...]:
        """Return the statuses whose script runs."""
        return (cls.APPROVED, cls.EDITED_AND_APPROVED, cls.AUTO_APPROVED)

    @classmethod
    def refused(cls) -> tuple[str, ...]:
        """Return the statuses whose script never runs."""
        return (cls.REJECTED_BY_VALIDATOR, cls.REJECTED, cls.EXPIRED, cls.WITHDRAWN)


class Submission(models.Model):
    """One script an agent sent for one sandbox, and what became of it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    sandbox = models.ForeignKey(Sandbox, on_delete=models.CASCADE, related_name="submissions")
    task = models.TextField()
    prompt = models.TextField(blank=True, help_text="The prompt the agent gave its LLM.")
    language = models.CharField(max_length=10, choices=Language.choices, default=Language.PYTHON)
    body = models.TextField(help_text="The script body exactly as the agent sent it.")
    script = models.TextField(help_text="The assembled script the validator checked.")
    code_sha256 = models.CharField(max_length=64)
    # The body's own digest: the same body assembles to other code once the sandbox's tools
    # change, and the review page still finds its earlier decisions by it.
    body_sha256 = models.CharField(max_length=64, blank=True)
    violations = models.JSONField(default=list, blank=True)
    # [{"name", "always_allow", "secrets"}] of the sandbox's tools the body refers to.
    tools_called = models.JSONField(default=list, blank=True)
    attempt = models.PositiveIntegerField(default=1)
    previous = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="retries"
    )
    api_token = models.ForeignKey(
        ApiToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="submissions"
    )
    # Kept as text too, so the audit still names the agent after its token is deleted.
    agent_name = models.CharField(max_length=200, blank=True)
    agent_user_agent = models.CharField(max_length=300, blank=True)
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="review_submissions",
    )
    policy = models.CharField(max_length=20, choices=ReviewPolicy.choices)
    status = models.CharField(max_length=24, choices=SubmissionStatus.choices, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    expires_at = models.DateTimeField(null=True, blank=True, db_index=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    feedback = models.TextField(blank=True)
    # What was approved: the agent's body, or the reviewer's edit of it.
    approved_body = models.TextField(blank=True)
    approved_script = models.TextField(blank=True)
    approved_sha256 = models.CharField(max_length=64, blank=True)
    run = models.OneToOneField(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="submission"
    )
    run_finished_noted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["status", "expires_at"]),
            # Every review page looks up the earlier decisions on its script by these.
            models.Index(fields=["sandbox", "code_sha256"], name="reviews_sub_same_code"),
            models.Index(fields=["sandbox", "body_sha256"], name="reviews_sub_same_body"),
        ]

    def __str__(self) -> str:
        return f"submission {self.short_id} ({self.status})"

    @property
    def short_id(self) -> str:
        """Return the first eight hex digits of the id, for display."""
        return self.id.hex[:8]

    @property
    def is_pending(self) -> bool:
        """Tell whether a reviewer may still decide."""
        return self.status == SubmissionStatus.PENDING

    @property
    def was_edited(self) -> bool:
        """Tell whether a reviewer changed the script before it ran."""
        return self.status == SubmissionStatus.EDITED_AND_APPROVED


class AuditAction(models.TextChoices):
    SUBMITTED = "submitted", "Submitted"
    REJECTED_BY_VALIDATOR = "rejected_by_validator", "Rejected by the validator"
    AUTO_APPROVED = "auto_approved", "Approved by policy"
    APPROVED = "approved", "Approved"
    EDITED = "edited", "Edited"
    EDITED_AND_APPROVED = "edited_and_approved", "Edited and approved"
    REJECTED = "rejected", "Rejected"
    EXPIRED = "expired", "Expired"
    WITHDRAWN = "withdrawn", "Withdrawn"
    RUN_STARTED = "run_started", "Run started"
    RUN_FINISHED = "run_finished", "Run finished"
    RUN_CANCELLED = "run_cancelled", "Run cancelled"
    POLICY_CHANGED = "policy_changed", "Policy changed"
    # Every run, from any surface (playground, review, API, trial), with its code's SHA-256.
    RUN_CREATED = "run_created", "Run created"
    # Catalog changes (sent by the catalog as `catalog_changed`): who, when, before → after.
    SANDBOX_CREATED = "sandbox_created", "Sandbox created"
    SANDBOX_CHANGED = "sandbox_changed", "Sandbox changed"
    SANDBOX_DELETED = "sandbox_deleted", "Sandbox deleted"
    TOOL_CREATED = "tool_created", "Tool created"
    TOOL_CHANGED = "tool_changed", "Tool changed"
    TOOL_DELETED = "tool_deleted", "Tool deleted"
    # Before trial wheels had an action of their own, their acceptances were stored as this.
    TOOL_ACCEPTED = "tool_accepted", "Tool code or trial wheels accepted"
    TRIAL_WHEELS_ACCEPTED = "trial_wheels_accepted", "Wheel files accepted for a tool's trials"
    SECRET_SET = "secret_set", "Secret value set"
    SECRET_CLEARED = "secret_cleared", "Secret value cleared"


class AuditEntry(models.Model):
    """One thing that happened to a submission: who, when, what, and the code's SHA-256."""

    submission = models.ForeignKey(
        Submission, null=True, blank=True, on_delete=models.CASCADE, related_name="audit"
    )
    sandbox = models.ForeignKey(Sandbox, on_delete=models.CASCADE, related_name="review_audit")
    action = models.CharField(max_length=24, choices=AuditAction.choices, db_index=True)
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_token = models.ForeignKey(
        ApiToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # "ada", "agent ci-bot (ada)", "policy", "expiry": readable after users or tokens go.
    actor_label = models.CharField(max_length=200)
    code_sha256 = models.CharField(max_length=64, blank=True)
    note = models.TextField(blank=True)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.action} by {self.actor_label}"


class WebhookEndpoint(models.Model):
    """Where to tell one token's agent about decisions and run ends; bodies are HMAC-signed."""

    api_token = models.OneToOneField(ApiToken, on_delete=models.CASCADE, related_name="webhook")
    url = models.URLField(max_length=500)
    # Encrypted at rest like sandbox secrets; the server needs the plain value to sign.
    secret_ciphertext = models.TextField()
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"webhook of {self.api_token} → {self.url}"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Gave up"
    # Never sent (or not sent again): the token that registered the webhook may no longer
    # hear of the submission (revoked, its user deactivated or out of the sandbox's team).
    CANCELLED = "cancelled", "Cancelled"


class WebhookDelivery(models.Model):
    """One event to send to one endpoint; retried with exponential backoff until it lands."""

    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    submission = models.ForeignKey(
        Submission, null=True, blank=True, on_delete=models.CASCADE, related_name="deliveries"
    )
    event = models.CharField(max_length=40)
    url = models.URLField(max_length=500)
    # The exact bytes sent on every attempt (the signature covers them).
    body = models.TextField()
    status = models.CharField(
        max_length=12, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING, db_index=True
    )
    attempt_count = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # While an attempt is in flight: no other worker may start one before this time.
    claimed_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    # Why a delivery was cancelled, in one readable line ("its API token was revoked").
    cancel_reason = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name_plural = "webhook deliveries"

    def __str__(self) -> str:
        return f"{self.event} → {self.url} ({self.status})"


class WebhookAttempt(models.Model):
    """One HTTP request of a delivery and how the receiver answered."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempts")
    number = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    status_code = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    duration_ms = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["delivery", "number"]

    @property
    def ok(self) -> bool:
        """Tell whether the receiver accepted the request."""
        return self.status_code is not None and 200 <= self.status_code < 300
