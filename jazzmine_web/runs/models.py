"""A run of one script in one sandbox, and the numbered events it produced."""

from __future__ import annotations

import hashlib
import uuid

from django.conf import settings
from django.db import models

from ..catalog.models import Sandbox
from ..studio.hotrows import Rows
from ..teams.models import ApiToken


class Language(models.TextChoices):
    PYTHON = "python", "Python"
    BASH = "bash", "Bash"


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    PREPARING = "preparing", "Preparing sandbox"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"

    @classmethod
    def finished(cls) -> tuple[str, str]:
        """Return the statuses a run never leaves."""
        return (cls.SUCCEEDED, cls.FAILED)


def code_sha256(script: str) -> str:
    """Return the SHA-256 of the exact code that runs (the audit trail compares these)."""
    return hashlib.sha256(script.encode("utf-8")).hexdigest()


class Run(models.Model):
    """One script, exactly as it ran, with how and when it ended."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    sandbox = models.ForeignKey(Sandbox, on_delete=models.CASCADE, related_name="runs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    language = models.CharField(max_length=10, choices=Language.choices, default=Language.PYTHON)
    task = models.TextField(blank=True)
    body = models.TextField(help_text="The script body as written (by the LLM or a person).")
    script = models.TextField(help_text="The assembled script that was sent to the sandbox.")
    body_offset = models.PositiveIntegerField(default=0)
    code_sha256 = models.CharField(max_length=64, db_index=True)
    attempt = models.PositiveIntegerField(default=1)
    source = models.CharField(max_length=20, default="playground")  # playground | review | api
    # A list of names in rows written before runs carried checksums (`runs.preparation`);
    # {name: checksum} in rows of runs finished before they carried digests (migration 0007).
    allowed_tools = models.JSONField(
        null=True,
        blank=True,
        help_text=(
            "The tools this run may call, as decided when it was let through: {name: the "
            "SHA-256 of the code an admin had accepted (its code_digest)}, or of the code the "
            "tools a reviewer approved had then (see allowed_by_reviewer; a list of names "
            "before approvals named the code); null means all (a member ran it from the "
            "playground, or the sandbox never reviews)."
        ),
    )
    # Which decision `allowed_tools` holds: a reviewer's (the tools the review page listed,
    # whether or not always allowed) or a policy's (only always-allowed tools, each at the
    # code an admin accepted). Two decisions, two checks in `runs.preparation`.
    allowed_by_reviewer = models.BooleanField(
        default=False,
        help_text=(
            "allowed_tools is the tools a reviewer was shown and approved, not the "
            "always-allowed tools a policy let through."
        ),
    )
    # The agent's token a policy let this run through on, with no person reading it: the run
    # goes on that token's authority as well as its owner's, and stops when it is revoked or
    # deleted. No database constraint and nothing done on delete: the id outlives the token,
    # and a token the database no longer knows opens nothing (`runs.lifecycle`).
    api_token = models.ForeignKey(
        ApiToken,
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
        help_text="The API token whose submission a policy let through without a reviewer.",
    )
    notes = models.JSONField(
        default=list,
        blank=True,
        help_text=(
            "What the worker withheld from this run as it prepared it, and why: secrets of "
            "code no admin accepted, tools that changed since the run was let through."
        ),
    )
    status = models.CharField(
        max_length=12, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True
    )
    outcome = models.CharField(max_length=24, blank=True)  # jazzmine.sandbox.Outcome
    message = models.TextField(blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    backend = models.CharField(max_length=16, blank=True)
    image = models.CharField(max_length=300, blank=True)
    warm = models.BooleanField(null=True, help_text="Whether a pre-started sandbox was ready.")
    event_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    first_event_ms = models.FloatField(null=True, blank=True)
    duration_ms = models.FloatField(null=True, blank=True)
    # Who executes it: the worker that claimed it, and when that worker last said it was alive.
    enqueued_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    cancel_reason = models.TextField(blank=True, help_text="Why a person asked to stop it.")

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["sandbox", "-created_at"])]

    def __str__(self) -> str:
        return f"run {self.short_id} ({self.status})"

    @property
    def short_id(self) -> str:
        """Return the first eight hex digits of the id, for display."""
        return self.id.hex[:8]

    @property
    def is_finished(self) -> bool:
        """Tell whether the run has ended."""
        return self.status in RunStatus.finished()

    @property
    def badge(self) -> str:
        """Return the look of its status badge (`status_shown`)."""
        return status_shown(self.status, self.outcome)[0]

    @property
    def status_label(self) -> str:
        """Return its status in words (`status_shown`)."""
        return status_shown(self.status, self.outcome)[1]


def status_shown(status: str, outcome: str) -> tuple[str, str]:
    """Return a run's status badge look and words, from its status and outcome.

    A run someone stopped is stored `failed` with outcome `cancelled` (the API's `status`
    stays one of its values): it reads "Cancelled", in no alarming colour, since nothing went
    wrong. A status this code does not know is shown as it is.
    """
    if status == RunStatus.FAILED and outcome == "cancelled":
        return "cancelled", "Cancelled"
    label = RunStatus(status).label if status in RunStatus.values else status
    return status, str(label)


class RunEvent(models.Model):
    """One event of a run, numbered as the sandbox numbered it."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=16)
    data = models.JSONField(null=True, blank=True)
    ts = models.FloatField()

    class Meta:
        ordering = ["run", "seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="run_event_unique_seq")]

    def to_dict(self) -> dict[str, object]:
        """Return the form sent to browsers and agents."""
        return {"seq": self.seq, "type": self.type, "data": self.data, "ts": self.ts}


# Read on every run page, follow and once a second by every socket streaming a run.
RUN = Rows(Run, where=("id",))
