"""Trial runs of script tools (the spec's Gate 6) and the keychain tokens of runs."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from ..catalog.models import Sandbox, Tool
from ..runs.models import Run


class TrialState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"


class TrialRun(models.Model):
    """One trial run of a script tool's code with sample arguments, and how it ended."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tool = models.ForeignKey(Tool, on_delete=models.CASCADE, related_name="trials")
    # The tool's checksum when the trial was asked for: its short name, for pages.
    checksum = models.CharField(max_length=16)
    # The tool's whole `code_digest` when the trial was asked for: a pass counts for that code
    # only, and the trial runs that code only. Not the checksum: 16 hex chars collide after
    # some 2^32 tries, so other code of the same checksum would publish on this pass, or run
    # recorded as this code. "" counts for no code (a trial of older code recorded before
    # trials carried the digest, see migration 0003, or of code that has none).
    code_digest = models.CharField(max_length=64, blank=True)
    args = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=8, choices=TrialState.choices, default=TrialState.QUEUED)
    status = models.CharField(max_length=20, blank=True)  # jazzmine.scripttools.TrialStatus
    passed = models.BooleanField(default=False)
    message = models.TextField(blank=True)
    exit_code = models.IntegerField(null=True, blank=True)
    stdout = models.TextField(blank=True)
    stderr = models.TextField(blank=True)
    data = models.JSONField(null=True, blank=True)
    duration_ms = models.FloatField(null=True, blank=True)
    image = models.CharField(max_length=300, blank=True)
    # The wheel files ("name sha256", sorted) of the image it ran in, as the image's label
    # says: what an admin reads and accepts on the tool page for its code's next trials.
    # None: the base image (no dependency), an image that did not say, or no image at all.
    image_wheels = models.JSONField(null=True, blank=True, default=None)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The worker running it, and when that worker last said it was alive.
    worker = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"trial of {self.tool.name} ({self.status or self.state})"

    @property
    def is_finished(self) -> bool:
        """Tell whether the trial has ended."""
        return self.state == TrialState.DONE

    @property
    def is_current(self) -> bool:
        """Tell whether the trial ran the tool's current code."""
        return self.is_of_code(self.tool.code_digest)

    def is_of_code(self, code_digest: str) -> bool:
        """Tell whether the trial was asked for the code of this whole digest (never "")."""
        return bool(code_digest) and self.code_digest == code_digest


class KeychainToken(models.Model):
    """A bearer token that lets one run (or trial) read the secrets its tools declare."""

    token_sha256 = models.CharField(max_length=64, unique=True)
    sandbox = models.ForeignKey(Sandbox, on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    trial = models.ForeignKey(
        TrialRun, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # The secret names the tools of the run declare: nothing else is ever answered.
    allowed = models.JSONField(default=list, blank=True)
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        owner = f"run {self.run_id}" if self.run_id else f"trial {self.trial_id}"
        return f"keychain token of {owner}"
