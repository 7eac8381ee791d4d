"""What a run needs before it starts: its sandbox image, request, limits, secrets and tools.

Everything here reads the database (on the executor's database thread) and returns plain
values; the executor's loop only starts sandboxes and records events.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from jazzmine.bash import BashLimits, ToolSpec, specs_for_sandbox
from jazzmine.sandbox import RunLimits, RunRequest, SandboxBuilder
from jazzmine.sandbox.bwrap import stage_run_dir
from jazzmine.sandbox.harness.main import SECRETS_PIPE_BYTES
from jazzmine.sandbox.request import names_by_tool

from ..catalog.models import SANDBOX, Sandbox, Tool
from ..catalog.selectors import sandbox_secret_values
from ..catalog.services import registry_for_sandbox, sandbox_builder, script_tool_from_row
from ..catalog.services.secrets import (
    secrets_gate,
    secrets_withheld_line,
    wheels_accepted_problem,
)
from ..studio.db import DATABASE_UNREACHABLE
from .credentials import run_credentials_issue, run_credentials_revoke, run_credentials_tools
from .lifecycle import (
    run_claim,
    run_claimable,
    run_claimed_by,
    run_decider_refusal,
    run_stop,
)
from .models import Run, RunStatus

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BashPlan:
    """What a bash run needs besides the sandbox image and its request: builtins and limits."""

    specs: list[ToolSpec]
    limits: BashLimits


@dataclass(frozen=True)
class ImageToMake:
    """An image a run needs that this worker does not know to exist: made off the DB thread."""

    builder: SandboxBuilder
    sandbox_name: str
    tag: str

    def exists(self) -> bool:
        """Tell whether the engine has the image already (another worker made it)."""
        return self.builder.image_exists(self.tag)

    def ensure(self) -> str:
        """Build the image unless the engine has it; return its tag (seconds to minutes)."""
        return self.builder.ensure_image(self.sandbox_name).tag


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
    # How a Docker run's image is made; `image_known`: this worker saw the image exist.
    image_source: ImageToMake | None = None
    image_known: bool = False
    # What the run was refused while it was prepared (stored already): told with RUNNING.
    notes: tuple[str, ...] = ()
    # Whether the worker must read the wheels of the image it runs before any secret goes
    # in (`run_wheels_gate`), and the wheel files an admin accepted for the sandbox.
    wheels_check: bool = False
    accepted_wheels: tuple[str, ...] | None = None
    # The id of the image whose wheels the check read (a bash run is built on that one).
    image_id: str | None = None

    @property
    def running(self) -> bool:
        """Whether the claim stored RUNNING itself: a Docker run whose image was known.

        Else the run is PREPARING until its image is made (or its bubblewrap directory
        staged) and the loop stores RUNNING.
        """
        return self.backend == "docker" and self.image_known


def run_limits_for(sandbox: Any) -> RunLimits:
    """Return the container limits of a sandbox (and the operator's cap on a run's events)."""
    return RunLimits.from_sandbox(sandbox.to_config(), max_events=settings.JAZZMINE_MAX_RUN_EVENTS)


class ClaimUnsettled(Exception):
    """The database stopped answering before a run's claim was known to be made.

    Nothing of the run is this worker's then (another worker may be executing it): the claim
    is tried again with `again`, and never ends the run as if the run had failed.
    """


def run_claim_prepare(
    *,
    run_id: Any,
    worker: str,
    known_images: frozenset[str],
    at: datetime.datetime | None = None,
    again: bool = False,
) -> Prepared | None:
    """Claim a queued run for this worker and read what its start needs; None if it was taken.

    One call on the worker's DB thread. What decides the run's image is read before the claim
    (reads only: a duplicate delivery of the task costs nothing else), so that the claim can
    store RUNNING when the image is known to exist: one write before the sandbox starts
    instead of two. Secrets and credentials are read and issued only once the run is ours.

    `at` is the claim's time; a try `again` after `ClaimUnsettled` with the same `at` takes
    up a claim of that time whose answer was lost. Once the claim is made, any failure is
    the run's own.
    """
    try:
        claimed = _run_claim(
            run_id=run_id, worker=worker, known_images=known_images, at=at, again=again
        )
    except DATABASE_UNREACHABLE as exc:
        raise ClaimUnsettled(str(exc)) from exc
    if claimed is None:
        return None
    run, registry, rows, builder, tag, running = claimed
    sandbox = run.sandbox
    docker = sandbox.backend == "docker"
    source = ImageToMake(builder, sandbox.name, tag) if docker else None
    if run.language == "bash":
        if not docker:
            raise ValueError("bash scripts run in Docker sandboxes only (this one uses bubblewrap)")
        return _prepare_bash(run, registry, rows, tag, source=source, known=running)
    allowed = _allowed_tools(run, rows)
    secrets, tool_secrets = _run_secrets(
        run, registry, rows, lifetime=sandbox.timeout_seconds, allowed=allowed
    )
    request = RunRequest(
        script=run.script,
        body_offset=run.body_offset,
        secrets=secrets,
        tool_secrets=tool_secrets,
        # The harness refuses any other tool: the review decision holds where the code runs.
        allowed_tools=allowed,
        # And any argument a tool's prompt does not document.
        tool_parameters=names_by_tool(registry.tool_parameter_names(sandbox.name)),
    )
    limits = run_limits_for(sandbox)
    check, accepted = _wheels_to_check(sandbox, registry, request)
    if not docker:
        # The run removes the directory when it ends; its wheels are the files the run imports.
        runtime_dir, staged = stage_run_dir(builder, sandbox.name)
        if check:
            request, note = _wheels_withheld(request, accepted, staged)
            if note:
                _run_note(run, note)
                run_credentials_revoke(run_id=run_id)  # withheld: none stays valid
        return Prepared(
            run_id, sandbox.pk, "bwrap", f"bwrap:{runtime_dir}", runtime_dir, limits, request,
            notes=tuple(run.notes),
        )  # fmt: skip
    return Prepared(
        run_id, sandbox.pk, "docker", tag, None, limits, request,
        image_source=source, image_known=running, notes=tuple(run.notes),
        wheels_check=check, accepted_wheels=accepted,
    )  # fmt: skip


def _run_claim(
    *,
    run_id: Any,
    worker: str,
    known_images: frozenset[str],
    at: datetime.datetime | None,
    again: bool,
) -> tuple[Run, Any, list[Tool], SandboxBuilder, str, bool] | None:
    """Read what decides a run's image and claim the run; None when it is not this worker's."""
    run = run_claimable(run_id=run_id)
    ours = None
    if run is None and again and at is not None:
        ours = run = run_claimed_by(run_id=run_id, worker=worker, at=at)
    if run is None:
        return None  # another worker has it, or it was cancelled or ended meanwhile
    sandbox = run.sandbox = SANDBOX.get(run.sandbox_id)
    if sandbox is None:
        return None  # deleted with its runs meanwhile (a cascade): nothing left to run
    if ours is None:
        cause = run_decider_refusal(run=run, team_id=sandbox.team_id)
        if cause:
            # Ended where it waits (queued): nothing of it ran, nobody's tokens were issued.
            run_stop(run_id=run_id, reason=f"cancelled before it started: {cause}")
            return None
    docker = sandbox.backend == "docker"
    try:
        rows = sandbox.tool_rows()
        registry = registry_for_sandbox(sandbox, tools=rows)
        builder = sandbox_builder(sandbox, registry=registry)
        tag = builder.image_tag(sandbox.name) if docker else ""
        if docker:
            # The operator's list of base images holds for an image that exists already.
            builder.check_allowed(sandbox.name)
    except DATABASE_UNREACHABLE:
        raise
    except Exception:
        # A failure is the run's to report once the run is ours (not another worker's).
        if ours is not None or run_claim(run_id=run_id, worker=worker, at=at):
            raise
        return None
    if ours is not None:
        return ours, registry, rows, builder, tag, ours.status == RunStatus.RUNNING
    # A bubblewrap run's directory is staged after the claim, so RUNNING waits for it.
    running = docker and tag in known_images
    started = {"backend": "docker", "image": tag}
    if not run_claim(run_id=run_id, worker=worker, running=running, at=at, **started):
        return None
    return run, registry, rows, builder, tag, running


def _wheels_to_check(
    sandbox: Sandbox, registry: Any, request: RunRequest
) -> tuple[bool, tuple[str, ...] | None]:
    """Tell whether a run's image wheels must be read before it starts, and what was accepted.

    Only when secrets would go in and the image holds wheels (the sandbox's or its tools'
    dependencies): a sandbox without dependencies has no wheel to accept.
    """
    if not (request.secrets or request.tool_secrets):
        return False, None
    if not registry.aggregate_dependencies(sandbox.name):
        return False, None
    accepted = sandbox.accepted_wheels
    return True, (tuple(accepted) if accepted is not None else None)


def _wheels_withheld(
    request: RunRequest, accepted: tuple[str, ...] | None, image: list[str] | None
) -> tuple[RunRequest, str]:
    """Return the request with no secret unless the wheels run are the ones an admin accepted,
    and the note saying why, in words the person reading it acts on ("" when they are)."""
    problem = wheels_accepted_problem(accepted=accepted, image=image)
    if not problem:
        return request, ""
    names = sorted({*request.secrets, *(n for s in request.tool_secrets.values() for n in s)})
    note = f"secrets withheld ({', '.join(names)}): {problem}"
    return dataclasses.replace(request, secrets={}, tool_secrets={}), note


def run_wheels_refused(*, prepared: Prepared, image_wheels: list[str] | None) -> bool:
    """Tell whether a run's secrets stay out of an image holding `image_wheels` (no database)."""
    if not prepared.wheels_check:
        return False
    return bool(wheels_accepted_problem(accepted=prepared.accepted_wheels, image=image_wheels))


def run_wheels_gate(*, prepared: Prepared, image_wheels: list[str] | None) -> Prepared:
    """Apply the wheel check to a Docker run once its image is known (on the DB thread).

    `image_wheels` is what the label of the image the run starts says it holds. Read by the
    worker from the image itself, not from a build row: the image is what loads.
    """
    if not prepared.wheels_check:
        return prepared
    request, note = _wheels_withheld(prepared.request, prepared.accepted_wheels, image_wheels)
    if not note:
        return prepared
    run_note_add(run_id=prepared.run_id, note=note)
    # Every secret is withheld, so the credentials issued for it are taken back now: left,
    # they stayed valid until the run ended, though they never reached the sandbox.
    run_credentials_revoke(run_id=prepared.run_id)
    return dataclasses.replace(
        prepared, request=request, notes=(*prepared.notes, note), wheels_check=False
    )


def run_note_add(*, run_id: Any, note: str) -> None:
    """Store a note on a run by id (one more thing it was refused, and why)."""
    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run_id)
        _run_note(run, note)


def sandbox_current_image(*, sandbox_id: int) -> tuple[str, RunLimits] | None:
    """Return a Docker sandbox's current image and limits, if that image exists."""
    sandbox = Sandbox.objects.get(pk=sandbox_id)
    if sandbox.backend != "docker":
        return None
    builder = sandbox_builder(sandbox)
    builder.check_allowed(sandbox.name)  # no pool of an image the operator no longer lists
    tag = builder.image_tag(sandbox.name)
    return (tag, run_limits_for(sandbox)) if builder.image_exists(tag) else None


def _run_secrets(
    run: Run,
    registry: Any,
    rows: list[Tool],
    *,
    lifetime: float,
    allowed: frozenset[str] | None = None,
) -> tuple[dict[str, str], dict[str, frozenset[str]]]:
    """Return a run's secrets and, for each tool that has any, the ones that are its alone.

    The sandbox's declared values that the store holds, and the credentials issued for the
    run; a secret only some tools declare, or a credential issued for one tool (a script
    tool's keychain token), is theirs: the harness sets it only while they run. Only code an
    admin accepted gets any (`secrets_gate`); what is withheld is noted on the run, and the
    tool finds the variable missing. A tool the run may not call (`allowed`, None: every
    tool) gets none at all: the harness would refuse its calls, and a secret sent anyway is
    one more thing in the sandbox for a script that got past its walls to read.
    """
    sandbox = run.sandbox
    # What the run loads: its published tools, and the wheels of the sandbox's image.
    gate = secrets_gate(tools=[row for row in rows if row.published], sandbox=sandbox)
    declared = {t.name: list(t.secrets) for t in registry.tools(sandbox.name)}
    # Keyed by no tool's name: the sandbox's own secrets, every tool's for the whole run.
    declared[""] = list(registry.get_sandbox(sandbox.name).secrets)
    withheld = gate.withheld(declared)
    values = sandbox_secret_values(sandbox, names=registry.aggregate_secrets(sandbox.name))
    _run_note(run, secrets_withheld_line({n: why for n, why in withheld.items() if n in values}))
    tool_only = registry.tool_only_secrets(sandbox.name)
    scoped = {tool: set(names) - set(withheld) for tool, names in tool_only.items()}
    if allowed is not None:
        # Only the tools it may call: a secret of the others' alone is not sent at all.
        scoped = {tool: names for tool, names in scoped.items() if tool in allowed}
        needed = set().union(*scoped.values())  # a name two tools declare may be one's to call
        barred = {name for names in tool_only.values() for name in names} - needed
        withheld = {**withheld, **dict.fromkeys(barred, "")}
    secrets = {name: value for name, value in values.items() if name not in withheld}

    def may_have_credentials(tool: str) -> bool:
        return gate.tool_allowed(tool) and (allowed is None or tool in allowed)

    # Issued only to a process whose Python tools are accepted, and only for accepted tools
    # the run may call: a keychain token is a secret too (it reads the tool's values).
    issued = (
        run_credentials_issue(run=run, lifetime=lifetime, tool_allowed=may_have_credentials)
        if not gate.shut
        else {}
    )
    for tool, names in run_credentials_tools(issued).items():
        scoped.setdefault(tool, set()).update(names)
    scoped = {tool: names for tool, names in scoped.items() if names}
    handed = {**secrets, **issued}
    size = _tools_secrets_bytes(scoped, handed)
    if size is not None and size > SECRETS_PIPE_BYTES:
        # The harness would hand none of them (they do not fit the pipe it writes them to)
        # and say so in the log alone: said on the run instead, and none sent at all.
        own = set().union(*scoped.values())
        _run_note(
            run,
            f"the tools' own secrets are {size:,} bytes together, more than the "
            f"{SECRETS_PIPE_BYTES:,} a sandbox hands its tools: no tool got its own secrets "
            "(clear or shorten the largest, or declare fewer per tool)",
        )
        run_credentials_revoke(run_id=run.pk)
        handed = {name: value for name, value in secrets.items() if name not in own}
        scoped = {}
    return handed, {tool: frozenset(names) for tool, names in scoped.items()}


def _tools_secrets_bytes(scoped: dict[str, set[str]], values: dict[str, str]) -> int | None:
    """Return what the harness writes to its secrets pipe for these tools (frames of JSON), or
    None when even the most it could be fits: a run's claim does not encode them to know."""
    # An escape is at most 6 characters a character; names and JSON around them, far less.
    most = sum(
        6 * len(values.get(n, "")) + 2 * len(n) + 16 for names in scoped.values() for n in names
    )
    if most + 128 * len(scoped) <= SECRETS_PIPE_BYTES:  # a tool name of 64 and the frame
        return None
    return sum(
        len(json.dumps({"tool": tool, "secrets": {n: values.get(n, "") for n in sorted(names)}}))
        + 8  # each frame's length
        for tool, names in scoped.items()
    )


def _allowed_tools(run: Run, rows: list[Tool]) -> frozenset[str] | None:
    """Return the tools a run may call (None: all), as its row records the decision.

    A member's own run (None) may call every tool as they are when it runs. A reviewer's
    approval (`allowed_by_reviewer`) is for the tools the review page listed, each at the
    code it had then ({name: its `code_digest`}): a tool that took another name after it
    (created, renamed, published) is refused, which tools a script reaches being the
    reviewer's to decide, and so is one whose code a member changed while the run waited,
    which is code nobody decided the script may run with (it is dropped, as below). An
    approval recorded before runs carried the code is a list of names, held to names.

    A run let through without a person may call the always-allowed tools as they were then:
    {name: the whole `code_digest` of the code an admin had accepted}, never the checksum,
    which other code may share (an admin accepting that other code later would widen the
    decision to code it never named). A tool whose code is no longer that code (a
    member changed it while the run was queued), or that is no longer always allowed, is
    dropped, and the harness refuses its calls saying they need a person's approval.
    Dropped, not the whole run failed: everything that still runs is code an admin
    accepted, which is all the policy promised, and the script that calls the changed tool
    learns why at that call, as any script that slips past the reading does; the run's
    notes say which tool and why.
    """
    decided = run.allowed_tools
    if decided is None:
        return None
    if run.allowed_by_reviewer:
        if isinstance(decided, list) and all(isinstance(name, str) for name in decided):
            return frozenset(decided)
        if isinstance(decided, dict):
            held: dict[str, str | None] = {str(k): str(v) for k, v in decided.items()}
            return _held_to_code(run, rows, held, by_reviewer=True)
        _run_note(run, "no tool may be called: the tools its reviewer approved are unreadable")
        return frozenset()  # fail closed
    if isinstance(decided, list) and all(isinstance(name, str) for name in decided):
        # Recorded before runs carried checksums: bound to the code accepted now, at least.
        bound: dict[str, str | None] = dict.fromkeys(decided)
    elif isinstance(decided, dict):
        # A checksum left by a run let through before runs carried digests (runs migration
        # 0007 turned those of the code accepted then into its digest) matches no digest.
        bound = {str(name): str(digest) for name, digest in decided.items()}
    else:
        _run_note(run, "no tool may be called: the run's allowed tools are unreadable")
        return frozenset()  # fail closed
    return _held_to_code(run, rows, bound, by_reviewer=False)


def _held_to_code(
    run: Run, rows: list[Tool], bound: dict[str, str | None], *, by_reviewer: bool
) -> frozenset[str]:
    """Return the tools of `bound` ({name: code digest}) still at that code; note the others.

    A tool a reviewer approved need not be always allowed (the reviewer allowed it); one a
    policy let through must still be. A digest of None holds to no particular code.
    """
    rows_by_name = {row.name: row for row in rows if row.published}
    allowed: set[str] = set()
    dropped: list[str] = []
    since = "its reviewer approved this run" if by_reviewer else "this run was let through"
    for name, digest in sorted(bound.items()):
        row = rows_by_name.get(name)
        if row is None:
            dropped.append(f"{name} (gone)")
        elif not by_reviewer and not row.is_always_allowed:
            why = row.code_acceptance_problem or "it is no longer always allowed"
            dropped.append(f"{name} ({why})")
        elif digest is not None and row.code_digest != digest:
            dropped.append(f"{name} (its code changed since {since})")
        else:
            allowed.add(name)
    if dropped:
        _run_note(
            run,
            "tools that now need a person's approval, refused in this run: " + "; ".join(dropped),
        )
    return frozenset(allowed)


def _run_note(run: Run, note: str) -> None:
    """Store and log what a run was refused before it started, and why (nothing if empty)."""
    if not note:
        return
    logger.warning("run %s: %s", run.pk, note)
    run.notes = [*run.notes, note]
    Run.objects.filter(pk=run.pk).update(notes=run.notes)


def bash_limits_for(sandbox: Any) -> BashLimits:
    """Return the bash interpreter limits of a sandbox."""
    return BashLimits(
        max_commands=sandbox.bash_max_commands,
        max_loop_iterations=sandbox.bash_max_loop_iterations,
        timeout_seconds=sandbox.bash_timeout_seconds,
    )


def _prepare_bash(
    run: Run,
    registry: Any,
    rows: list[Any],
    tag: str,
    *,
    source: ImageToMake | None,
    known: bool,
) -> Prepared:
    """Collect the builtins, limits and environment of a bash run (claimed already)."""
    sandbox = run.sandbox
    script_tools = [t for t in map(script_tool_from_row, rows) if t is not None]
    specs = specs_for_sandbox(registry, sandbox.name, script_tools=script_tools)
    bash_limits = bash_limits_for(sandbox)
    allowed = _allowed_tools(run, rows)
    secrets, tool_secrets = _run_secrets(
        run, registry, rows, lifetime=bash_limits.timeout_seconds, allowed=allowed
    )
    # The bash runner refuses any builtin outside the run's decision, as the harness does.
    request = RunRequest(
        script=run.script,
        body_offset=0,
        allowed_tools=allowed,
        secrets=secrets,
        tool_secrets=tool_secrets,
    )
    plan = BashPlan(specs=specs, limits=bash_limits)
    check, accepted = _wheels_to_check(sandbox, registry, request)
    return Prepared(
        run.pk, sandbox.pk, "docker", tag, None, run_limits_for(sandbox), request,
        bash=plan, image_source=source, image_known=known, notes=tuple(run.notes),
        wheels_check=check, accepted_wheels=accepted,
    )  # fmt: skip
