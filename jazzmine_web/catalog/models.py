"""The catalog's rows: sandboxes, tools, their immutable versions, secrets and image builds."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from jazzmine.core.tools import SandboxConfig
from jazzmine.core.tools.registry import DEFAULT_BASE_IMAGE
from jazzmine.scripttools import RUNTIMES

from ..studio.fields import OrderedJSONField
from ..studio.hotrows import Rows
from ..teams.models import Team
from .code_digest import tool_code_digest
from .limits import clamped


class Backend(models.TextChoices):
    DOCKER = "docker", "Docker"
    BWRAP = "bwrap", "bubblewrap"


class ToolKind(models.TextChoices):
    PYTHON = "python", "Python @tool function"
    SCRIPT = "script", "Script tool (tool.json + script.py)"


class Sandbox(models.Model):
    """A team's environment profile: every `SandboxConfig` field plus its owner."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="sandboxes")
    name = models.CharField(max_length=63)
    description = models.TextField(blank=True)
    dependencies = models.JSONField(default=list, blank=True)
    # The dependencies a team admin accepted (wrote, or pressed Accept on). Their wheels load
    # into every run's process, beside the tools: secrets reach a run only while
    # `dependencies` are these (`dependencies_accepted`), as they reach a tool only while its
    # code is the code an admin accepted.
    accepted_dependencies = models.JSONField(default=list, blank=True, editable=False)
    accepted_dependencies_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
    )
    accepted_dependencies_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The wheel files ("name sha256", sorted) a team admin accepted with them, read from a
    # built image the Accept page listed. The list above names versions, not files: pip may
    # pick another file for the same pin, and dependencies of dependencies are not pinned,
    # so a run gets secrets only from an image holding exactly these (`wheels_accepted_problem`).
    # None: no admin has seen the files (an admin's own edit of the list binds none).
    accepted_wheels = models.JSONField(null=True, blank=True, default=None, editable=False)
    secrets = models.JSONField(default=list, blank=True)
    network = models.BooleanField(default=False)
    memory_mb = models.PositiveIntegerField(default=256)
    cpus = models.FloatField(default=1.0)
    pids_limit = models.PositiveIntegerField(default=128)
    timeout_seconds = models.FloatField(default=30.0)
    max_output_bytes = models.PositiveIntegerField(default=1_000_000)
    base_image = models.CharField(max_length=200, default=DEFAULT_BASE_IMAGE)
    backend = models.CharField(max_length=16, choices=Backend.choices, default=Backend.DOCKER)
    # Walls of the bash interpreter (bashkit) for bash scripts; the container adds its own.
    bash_max_commands = models.PositiveIntegerField(default=10_000)
    bash_max_loop_iterations = models.PositiveIntegerField(default=10_000)
    bash_timeout_seconds = models.FloatField(default=30.0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="sandbox_unique_team_name")
        ]
        ordering = ["team__name", "name"]
        verbose_name_plural = "sandboxes"

    def __str__(self) -> str:
        return f"{self.team.slug}/{self.name}" if self.team_id else self.name

    def tool_rows(self) -> list[Tool]:
        """Return this sandbox's tools by name, as the catalog lists them.

        Not `self.tools.all()`: Tool's default ordering goes by sandbox name, which joins the
        sandbox (and, through Sandbox's own ordering, the team) for rows that all share one
        sandbox; every run's preparation and every script check reads these rows, so their
        SQL is written once (`studio.hotrows`).
        """
        return SANDBOX_TOOLS.all(self.pk)

    @property
    def dependencies_pending(self) -> list[str]:
        """Return the dependencies no team admin accepted (a member added or changed them)."""
        accepted = set(self.accepted_dependencies)
        return sorted(d for d in self.dependencies if d not in accepted)

    @property
    def dependencies_dropped(self) -> list[str]:
        """Return the accepted dependencies the sandbox no longer has (someone removed them)."""
        current = set(self.dependencies)
        return sorted(d for d in self.accepted_dependencies if d not in current)

    @property
    def dependencies_accepted(self) -> bool:
        """Tell whether the sandbox's dependencies are exactly the ones a team admin accepted.

        A dependency is code in every run's process: secrets reach runs only then
        (`catalog.services.secrets.secrets_gate`). Removing one needs an admin too: pip
        resolves the list as a whole, so a removed line that pinned another's version (or a
        package its tools need) lets a version load that no admin saw, say one a member
        published to the index since.
        """
        return not self.dependencies_pending and not self.dependencies_dropped

    @property
    def dependencies_acceptance_problem(self) -> str:
        """Say why the sandbox's dependencies are not accepted ("" when they are)."""
        problems = []
        if self.dependencies_pending:
            problems.append(
                f"no admin has accepted sandbox {self.name}'s dependencies "
                + ", ".join(self.dependencies_pending)
            )
        if self.dependencies_dropped:
            problems.append(
                f"sandbox {self.name}'s accepted dependencies "
                + ", ".join(self.dependencies_dropped)
                + " were removed since an admin accepted them (what is left may resolve to "
                "other versions)"
            )
        return "; ".join(problems)

    @property
    def secret_names(self) -> list[str]:
        """Return the stored secrets that are names, leaving out whatever else a row holds.

        Writes take names only (`services.rules.secret_names_checked`); a row stored before
        held numbers, None or "" from an import, and its pages (the edit page too, so nobody
        could mend it) answered 500 for good. Left out, nothing is given to a run under them.
        """
        stored = self.secrets if isinstance(self.secrets, list) else []
        return [name for name in stored if isinstance(name, str) and name.strip()]

    def to_config(self) -> SandboxConfig:
        """Return the core's profile of this sandbox, its numbers clamped to the deployment's.

        Runs and trials take their limits from here: a row written around the forms (an old
        row, a raw update) still never runs with memory 10^12, i.e. without a limit.
        """
        return SandboxConfig(
            name=self.name,
            dependencies=list(self.dependencies),
            secrets=self.secret_names,
            network=self.network,
            memory_mb=clamped("memory_mb", self.memory_mb),
            cpus=clamped("cpus", self.cpus),
            pids_limit=clamped("pids_limit", self.pids_limit),
            timeout_seconds=clamped("timeout_seconds", self.timeout_seconds),
            max_output_bytes=clamped("max_output_bytes", self.max_output_bytes),
            base_image=self.base_image,
            backend=self.backend,  # type: ignore[arg-type]
        )

    def save(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        # The bash interpreter reads these columns directly: keep them inside the bounds.
        for key in ("bash_max_commands", "bash_max_loop_iterations", "bash_timeout_seconds"):
            setattr(self, key, clamped(key, getattr(self, key)))
        super().save(*args, **kwargs)


class Tool(models.Model):
    """One tool of a sandbox: interface, source and needs, as the core registers it."""

    sandbox = models.ForeignKey(Sandbox, on_delete=models.CASCADE, related_name="tools")
    name = models.CharField(max_length=100)
    description = models.TextField()
    # A list of dicts with all nine ToolParameter attributes (ToolParameter.to_dict()).
    parameters = OrderedJSONField(default=list, blank=True)
    dependencies = models.JSONField(default=list, blank=True)
    secrets = models.JSONField(default=list, blank=True)
    kind = models.CharField(max_length=16, choices=ToolKind.choices, default=ToolKind.PYTHON)
    # The function's source without decorators, exactly as the core's registry extracts it.
    source = models.TextField()
    function_name = models.CharField(max_length=100)
    is_async = models.BooleanField(default=False)
    # What the tool asks for; it counts only once an admin accepted the current code
    # (`is_always_allowed`), so a member's edit never widens what skips review.
    always_allow = models.BooleanField(
        default=False, help_text="Scripts calling only always-allowed tools skip human review."
    )
    # The checksum of the code a team admin accepted (wrote, or pressed Accept on), whatever
    # `always_allow` says: secrets reach only that code (`code_accepted`), and `always_allow`
    # counts only for it. The column kept its first name (it once held always-allow
    # acceptances alone) so that no data moves; `_by` and `_at` say who accepted it and when.
    always_allow_accepted_checksum = models.CharField(
        max_length=16,
        blank=True,
        editable=False,
        help_text=(
            "The checksum of the code a team admin accepted: secrets reach the tool, and "
            "always_allow counts, only while its code is that code."
        ),
    )
    always_allow_accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
    )
    always_allow_accepted_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The whole SHA-256 of the code accepted (`code_digest`): the checksum alone, 16 hex
    # chars, would let two versions of one checksum pass for each other.
    accepted_code_digest = models.CharField(max_length=64, blank=True, editable=False)
    # The wheel files ("name sha256", sorted) of a trial's image that a team admin accepted
    # for trials of one code of this script tool, and that code's whole `code_digest`. A
    # script tool with dependencies is tried in an image holding them before it is published,
    # so before the sandbox page can offer its files: this is where its trial gets secrets
    # from. They count for that code only (`trial_wheels_accepted_for`); runs never read them.
    trial_accepted_wheels = models.JSONField(null=True, blank=True, default=None, editable=False)
    trial_accepted_code_digest = models.CharField(max_length=64, blank=True, editable=False)
    tags = models.JSONField(default=list, blank=True)
    # ",tag1,tag2," so a tag filter is one indexed-ish LIKE on every database.
    tags_index = models.CharField(max_length=500, blank=True, editable=False, db_index=True)
    checksum = models.CharField(max_length=16, editable=False)
    # Script tools (kind "script"): `source` holds the script, these hold the rest of tool.json.
    runtime = models.CharField(max_length=16, blank=True)  # python3 | node
    # tool.json "parameters": its properties' order is the positional arguments' order.
    schema = OrderedJSONField(default=dict, blank=True)
    timeout_seconds = models.FloatField(null=True, blank=True)
    extra = OrderedJSONField(default=dict, blank=True)  # unknown tool.json keys, kept for export
    # Only published tools are offered to LLMs; a script tool is published after a passed trial.
    published = models.BooleanField(default=True)
    published_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["sandbox", "name"], name="tool_unique_sandbox_name")
        ]
        ordering = ["sandbox__name", "name"]

    def __str__(self) -> str:
        return self.name

    @property
    def code_accepted(self) -> bool:
        """Tell whether a team admin accepted exactly the code (and dependencies) it has now.

        Secrets reach a tool's code only then: a member may change code, but not what that
        code may read (`catalog.services.secrets.secrets_gate`).
        """
        return bool(
            self.always_allow_accepted_checksum
            and self.always_allow_accepted_checksum == self.checksum
            and self.accepted_code_digest
            and self.accepted_code_digest == self.code_digest
        )

    @property
    def kind_shown(self) -> str:
        """Return the kind as the tool page says it: a script tool names its script's file."""
        if self.kind == ToolKind.SCRIPT:
            return f"Script tool (tool.json + {RUNTIMES.get(self.runtime, 'script.py')})"
        return self.get_kind_display()

    @property
    def code_digest(self) -> str:
        """Return the SHA-256 of everything that decides the code this tool loads into runs."""
        return tool_code_digest(self)

    @property
    def code_acceptance_problem(self) -> str:
        """Say why the tool's current code is not accepted ("" when it is), as a person reads it."""
        if self.code_accepted:
            return ""
        if self.always_allow_accepted_checksum:
            return f"tool {self.name}'s code changed since an admin accepted it"
        return f"no admin has accepted tool {self.name}'s code yet"

    def trial_wheels_accepted_for(self, code_digest: str) -> list[str] | None:
        """Return the wheel files an admin accepted for trials of this code (None: none).

        By the whole digest, never the checksum, and never for "": files accepted for other
        code say nothing of what this code's dependencies fetched.
        """
        if not code_digest or self.trial_accepted_code_digest != code_digest:
            return None
        files = self.trial_accepted_wheels
        return list(files) if isinstance(files, list) else None

    @property
    def is_always_allowed(self) -> bool:
        """Tell whether scripts may call this tool without review: asked for and accepted.

        The review gate reads this, never `always_allow`: an admin accepted exactly the code
        (and dependencies) the tool has now.
        """
        return bool(self.always_allow and self.code_accepted)

    @property
    def always_allow_pending(self) -> bool:
        """Tell whether the tool asks to be always allowed and waits for an admin."""
        return self.always_allow and not self.is_always_allowed

    @property
    def is_script(self) -> bool:
        """Tell whether this is a script tool (tool.json + script)."""
        return self.kind == ToolKind.SCRIPT

    def save(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        self.tags_index = "," + ",".join(self.tags) + "," if self.tags else ""
        super().save(*args, **kwargs)


class ToolVersion(models.Model):
    """An immutable snapshot of a tool: its code and needs, and the prompt the LLM reads."""

    tool = models.ForeignKey(Tool, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    source = models.TextField()
    dependencies = models.JSONField(default=list, blank=True)
    checksum = models.CharField(max_length=16)
    # What the tool asked for at this version (None: recorded before versions kept them).
    always_allow = models.BooleanField(null=True, blank=True)
    secrets = models.JSONField(null=True, blank=True)
    # The whole tool.json of a script tool at this version (empty for Python tools).
    tool_json = OrderedJSONField(default=dict, blank=True)
    # What the LLM read at this version: the fields behind the prompt ({"name", "description",
    # "parameters"}), for rollback, and the `<tool>` XML itself as the core rendered it then,
    # for the diff. None: recorded before prompts were versioned, so unknown.
    interface = OrderedJSONField(null=True, blank=True)
    prompt = models.TextField(null=True, blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    note = models.CharField(max_length=300, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tool", "number"], name="toolversion_unique_number")
        ]
        ordering = ["tool", "-number"]

    def __str__(self) -> str:
        return f"{self.tool.name} v{self.number}"

    def save(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        if self.pk is not None:
            raise ValueError("Tool versions are immutable; create a new version instead")
        super().save(*args, **kwargs)


class SecretValue(models.Model):
    """The value of one secret of a sandbox, encrypted with Fernet; never shown again."""

    sandbox = models.ForeignKey(Sandbox, on_delete=models.CASCADE, related_name="secret_values")
    name = models.CharField(max_length=200)
    ciphertext = models.TextField()
    set_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    set_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["sandbox", "name"], name="secretvalue_unique_name")
        ]
        ordering = ["sandbox", "name"]

    def __str__(self) -> str:
        return f"{self.sandbox}:{self.name}"


class BuildStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    BUILDING = "building", "Building"
    SUCCEEDED = "succeeded", "Built"  # of the code it built: "up to date" read wrong later
    FAILED = "failed", "Failed"


class ImageBuild(models.Model):
    """One attempt to build a sandbox's image, with its log."""

    sandbox = models.ForeignKey(Sandbox, on_delete=models.CASCADE, related_name="builds")
    checksum = models.CharField(max_length=16)  # the sandbox's checksum: a name for pages
    # The sandbox's whole digest (`ToolRegistry.sandbox_digest`) of the content built: what
    # decides which build is the image of the sandbox as it is now, whose wheels Accept binds.
    # Not the checksum: 16 hex chars collide after some 2^32 tries, so other content of the
    # same checksum would pass for this build. "" on builds recorded before (migration 0010).
    digest = models.CharField(max_length=64, blank=True)
    tag = models.CharField(max_length=300, blank=True)
    # {tool name: tool checksum} baked into this image: answers "which images include it".
    tool_checksums = models.JSONField(default=dict, blank=True)
    status = models.CharField(
        max_length=16, choices=BuildStatus.choices, default=BuildStatus.QUEUED
    )
    log = models.TextField(blank=True)
    line_count = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    built = models.BooleanField(default=False, help_text="False when the image already existed.")
    # The wheel files in the image ("name sha256", sorted), as its builder reported them;
    # None: not known (the build failed, or the image predates wheel labels).
    wheels = models.JSONField(null=True, blank=True, default=None)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The worker building it, and when that worker last said it was alive.
    worker = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"build #{self.pk} of {self.sandbox} ({self.status})"

    @property
    def is_running(self) -> bool:
        """Tell whether the build has not finished yet."""
        return self.status in (BuildStatus.QUEUED, BuildStatus.BUILDING)


# Read on every run's way to its sandbox (`studio.hotrows`).
SANDBOX = Rows(Sandbox, where=("id",))
SANDBOX_TOOLS = Rows(Tool, where=("sandbox",), order_by=("name",))
SANDBOX_SECRETS = Rows(SecretValue, where=("sandbox",))
