"""What a run needs before it starts: its sandbox image, request, limits, secrets and tools.

Everything here reads the database (on the executor's database thread) and returns plain
values; the executor's loop only starts sandboxes and records events.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jazzmine.bash import BashLimits, ToolSpec, specs_for_sandbox
from jazzmine.sandbox import RunLimits, RunRequest, SandboxBuilder
from jazzmine.sandbox.bwrap import stage_run_dir

from ..catalog.models import Sandbox
from ..catalog.selectors import sandbox_secret_values
from ..catalog.services import registry_for_sandbox, script_tool_from_row
from . import services
from .credentials import run_credentials_issue
from .models import Run, RunStatus


@dataclass(frozen=True)
class BashPlan:
    """What a bash run needs besides the sandbox image: builtins, interpreter limits, env."""

    specs: list[ToolSpec]
    limits: BashLimits
    environment: dict[str, str]


@dataclass(frozen=True)
class Prepared:
    """Everything the loop needs to start a run, read from the database in one go."""

    run_id: Any
    sandbox_id: int
    backend: str
    image: str
    runtime_dir: Path | None
    limits: RunLimits
    request: RunRequest
    bash: BashPlan | None = None


def run_limits_for(sandbox: Any) -> RunLimits:
    """Return the container limits of a sandbox."""
    return RunLimits.from_sandbox(sandbox.to_config())


def run_prepare(*, run_id: Any, known_images: set[str]) -> Prepared:
    """Read a run, make sure its sandbox image exists, and build its request."""
    run = Run.objects.select_related("sandbox").get(pk=run_id)
    if run.language == "bash":
        return _prepare_bash(run, known_images)
    sandbox = run.sandbox
    registry = registry_for_sandbox(sandbox)
    declared = registry.aggregate_secrets(sandbox.name)
    request = RunRequest.for_sandbox(
        run.script,
        declared_secrets=declared,
        secret_store=sandbox_secret_values(sandbox, names=declared),
        body_offset=run.body_offset,
    )
    issued = run_credentials_issue(run=run, lifetime=sandbox.timeout_seconds)
    if issued:
        request = dataclasses.replace(request, secrets={**request.secrets, **issued})
    # The harness refuses any other tool: the review decision holds where the code runs.
    request = dataclasses.replace(request, allowed_tools=_allowed_tools(run))
    builder = SandboxBuilder(registry)
    limits = run_limits_for(sandbox)
    if sandbox.backend == "bwrap":
        runtime_dir = stage_run_dir(builder, sandbox.name)  # the run removes it when it ends
        return Prepared(
            run_id, sandbox.pk, "bwrap", f"bwrap:{runtime_dir}", runtime_dir, limits, request
        )
    tag = builder.image_tag(sandbox.name)
    if tag not in known_images:
        # Asking the engine costs ~20 ms a run; an image tag names its content, so once it
        # exists it stays right (a removed image shows up as a failed start, and is forgotten).
        services.run_set_status(run_id=run_id, status=RunStatus.PREPARING, message="building image")
        tag = builder.ensure_image(sandbox.name).tag
        known_images.add(tag)
    return Prepared(run_id, sandbox.pk, "docker", tag, None, limits, request)


def sandbox_current_image(*, sandbox_id: int) -> tuple[str, RunLimits] | None:
    """Return a Docker sandbox's current image and limits, if that image exists."""
    sandbox = Sandbox.objects.get(pk=sandbox_id)
    if sandbox.backend != "docker":
        return None
    builder = SandboxBuilder(registry_for_sandbox(sandbox))
    tag = builder.image_tag(sandbox.name)
    return (tag, run_limits_for(sandbox)) if builder.image_exists(tag) else None


def _allowed_tools(run: Run) -> frozenset[str] | None:
    """Return the tools a run may call (None: all), as its row records the decision."""
    return None if run.allowed_tools is None else frozenset(run.allowed_tools)


def bash_limits_for(sandbox: Any) -> BashLimits:
    """Return the bash interpreter limits of a sandbox."""
    return BashLimits(
        max_commands=sandbox.bash_max_commands,
        max_loop_iterations=sandbox.bash_max_loop_iterations,
        timeout_seconds=sandbox.bash_timeout_seconds,
    )


def _prepare_bash(run: Run, known_images: set[str]) -> Prepared:
    """Make sure the sandbox image exists and collect the builtins of a bash run."""
    sandbox = run.sandbox
    if sandbox.backend != "docker":
        raise ValueError("bash scripts run in Docker sandboxes only (this one uses bubblewrap)")
    rows = list(sandbox.tools.all())
    registry = registry_for_sandbox(sandbox, tools=rows)
    script_tools = [t for t in map(script_tool_from_row, rows) if t is not None]
    specs = specs_for_sandbox(registry, sandbox.name, script_tools=script_tools)
    bash_limits = bash_limits_for(sandbox)
    declared = registry.aggregate_secrets(sandbox.name)
    environment = sandbox_secret_values(sandbox, names=declared)
    environment.update(run_credentials_issue(run=run, lifetime=bash_limits.timeout_seconds))
    builder = SandboxBuilder(registry)
    tag = builder.image_tag(sandbox.name)
    if tag not in known_images:
        services.run_set_status(run_id=run.pk, status=RunStatus.PREPARING, message="building image")
        tag = builder.ensure_image(sandbox.name).tag
        known_images.add(tag)
    # The bash runner refuses any builtin outside the run's decision, as the harness does.
    request = RunRequest(script=run.script, body_offset=0, allowed_tools=_allowed_tools(run))
    plan = BashPlan(specs=specs, limits=bash_limits, environment=environment)
    return Prepared(
        run.pk, sandbox.pk, "docker", tag, None, run_limits_for(sandbox), request, bash=plan
    )
