"""Writes of script tools: save and import them, trial-run them, publish them, keychain tokens."""

from __future__ import annotations

import datetime
import hashlib
import logging
import secrets as token_secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from jazzmine.interrupts import Interrupt, WorkInterrupted
from jazzmine.sandbox import RunLimits
from jazzmine.scripttools import ScriptTool, TrialResult, TrialStatus, export_zip, trial_run
from jazzmine.scripttools.adapter import KEYCHAIN_TOKEN_PREFIX
from jazzmine.scripttools.trial import START_GRACE_SECONDS

from ..catalog.models import Sandbox, Tool, ToolKind
from ..catalog.selectors import sandbox_secret_values
from ..catalog.services.audit import catalog_change_announce
from ..catalog.services.images import sandbox_builder
from ..catalog.services.imports import ImportReport
from ..catalog.services.registry import registry_for_sandbox, script_tool_from_row
from ..catalog.services.rules import actor_is_admin, upload_name_clash
from ..catalog.services.script_tools import script_tool_save
from ..catalog.services.secrets import (
    SecretsGate,
    secrets_gate,
    secrets_withheld_line,
    trial_wheels_problem,
)
from ..catalog.services.tools import tool_publish
from ..runs.models import Run, RunStatus, code_sha256
from ..studio.claims import heartbeat_cutoff, never_started_cutoff, row_claim
from ..studio.db import holds_row
from ..studio.enqueue import task_send_after_commit
from ..studio.storable import storable_json, storable_text
from .models import KeychainToken, TrialRun, TrialState
from .selectors import latest_passed_trial, trial_wheels_shown
from .signals import trial_started

logger = logging.getLogger(__name__)

# Environment names a sandbox sees when it may reach the keychain endpoint.
KEYCHAIN_URL_ENV = "JAZZMINE_KEYCHAIN_URL"
KEYCHAIN_TOKEN_ENV = "JAZZMINE_KEYCHAIN_TOKEN"
# A token outlives its run by at most this much, even if the run is never marked finished.
KEYCHAIN_GRACE_SECONDS = 60.0


class PublishRefused(ValidationError):
    """A script tool that may not be offered to LLMs yet."""


# Saving and importing


def script_tools_import(
    *,
    sandbox: Sandbox,
    tools: Iterable[ScriptTool],
    author: AbstractBaseUser | None,
    origin: str = "upload",
    actor: AbstractBaseUser | None = None,
) -> ImportReport:
    """Create or update script tools in a sandbox from loaded layouts; all or nothing."""
    report = ImportReport(changed_note="new version, needs a trial run")
    problems: list[str] = []
    seen: list[str] = []
    with transaction.atomic():
        for tool in tools:
            clash = upload_name_clash(seen, tool.name)
            seen.append(tool.name)
            if clash is not None:
                problems.append(f"{tool.name}: {clash}")
                continue
            existing = Tool.objects.filter(sandbox=sandbox, name=tool.name).first()
            if existing is not None and existing.kind != ToolKind.SCRIPT:
                problems.append(f"{tool.name}: the sandbox has a Python tool of that name")
                continue
            try:
                _, change = script_tool_save(
                    sandbox=sandbox,
                    tool=tool,
                    existing=existing,
                    author=author,
                    note=f"Imported from {origin}",
                    actor=actor,
                )
            except ValidationError as exc:
                problems.append(f"{tool.name}: {'; '.join(exc.messages)}")
                continue
            except PermissionDenied as exc:  # a member's tool.json sets admin-only fields
                problems.append(f"{tool.name}: {exc}")
                continue
            if existing is None:
                report.created.append(tool.name)
            else:
                report.tool_count(name=tool.name, change=change)
        if problems:
            transaction.set_rollback(True)
    if problems:
        raise ValidationError(problems)
    return report


def script_tools_export(*, sandbox: Sandbox) -> bytes:
    """Return a zip of the sandbox's script tools as `<tool_name>/{tool.json, script}`."""
    rows = sandbox.tools.filter(kind=ToolKind.SCRIPT).order_by("name")
    return export_zip(t for t in map(script_tool_from_row, rows) if t is not None)


# The publish gate


def script_tool_publish(
    *, tool: Tool, published: bool = True, actor: AbstractBaseUser | None = None
) -> Tool:
    """Publish a script tool whose current code passed a trial run (or withdraw it)."""
    # By the whole digest: a pass of other code that shares the 16-hex checksum is not one.
    if published and tool.kind == ToolKind.SCRIPT and latest_passed_trial(tool) is None:
        raise PublishRefused(
            f"{tool.name} cannot be published: no trial run of its current code "
            f"(checksum {tool.checksum}) has passed yet"
        )
    return tool_publish(tool=tool, published=published, actor=actor)


# Trial runs


def _check_args(args: Any) -> dict[str, Any]:
    if not isinstance(args, dict):
        raise ValidationError("Trial arguments must be a JSON object")
    return args


def trial_start(
    *,
    tool: Tool,
    user: AbstractBaseUser | None,
    args: dict[str, Any] | None = None,
    background: bool = True,
) -> TrialRun:
    """Queue a trial run of a script tool for a worker, never run here; audited like a run."""
    script_tool = script_tool_from_row(tool)
    if script_tool is None:
        raise ValidationError(f"{tool.name} is not a script tool")
    call_args = script_tool.sample_args() if args is None else _check_args(args)
    with transaction.atomic():  # queued with its audit entry, or not at all
        trial = TrialRun.objects.create(
            tool=tool,
            checksum=tool.checksum,
            code_digest=tool.code_digest,
            args=call_args,
            created_by=user if user is not None and user.is_authenticated else None,
        )
        trial_started.send(
            sender=TrialRun, trial=trial, user=trial.created_by, sha256=code_sha256(tool.source)
        )
    if background:
        task_send_after_commit("scripttools.trial_execute", str(trial.pk))
    return trial


def trial_claim(*, trial_id: Any, worker: str) -> bool:
    """Make a queued trial this worker's; False when another worker (or the reaper) got it."""
    rows = TrialRun.objects.filter(pk=trial_id, state=TrialState.QUEUED)
    return row_claim(rows.update, worker=worker, state=TrialState.RUNNING)


def trials_reap(*, judge_silence: bool = True) -> int:
    """End trials whose worker went silent, or that no worker took; return how many.

    Without `judge_silence` (as `runs.lifecycle.runs_reap`) no trial is taken for lost.
    """
    now = timezone.now()
    lost = TrialRun.objects.filter(state=TrialState.RUNNING, heartbeat_at__lt=heartbeat_cutoff(now))
    never = TrialRun.objects.filter(
        state=TrialState.QUEUED, created_at__lt=never_started_cutoff(now)
    )
    ended = (
        _trials_end(lost, "the worker running it stopped answering", now=now)
        if judge_silence
        else 0
    )
    return ended + _trials_end(never, "no worker took it (is a worker running?)", now=now)


def trials_of_earlier_life_end(*, worker: str, before: datetime.datetime) -> int:
    """End the trials a worker's previous process held when it died; return how many."""
    held = TrialRun.objects.filter(state=TrialState.RUNNING, worker=worker, heartbeat_at__lt=before)
    why = f"the worker running it ({worker}) was restarted (its previous process was killed)"
    return _trials_end(held, why, now=timezone.now())


def _trials_end(rows: QuerySet[TrialRun], why: str, *, now: datetime.datetime) -> int:
    """End trials that could not run, saying why; return how many."""
    return rows.update(
        state=TrialState.DONE,
        status=TrialStatus.SANDBOX_ERROR.value,
        passed=False,
        message=f"the trial could not run: {why}",
        finished_at=now,
    )


def _trial_image(
    tool: Tool, script_tool: ScriptTool, interrupt: Interrupt
) -> tuple[str, str, list[Tool] | None, list[str] | None]:
    """Return the image a trial runs in (its name, and what to start it from), the tools
    whose wheels it holds, and those wheels.

    The base image (None: it holds no wheel), or, for a tool with dependencies or in a
    sandbox with its own (which every tool of it imports in a run), the sandbox's own image
    with this (maybe unpublished) tool's dependencies in it, started by id; its wheel files
    as its label says (None: it does not say).
    """
    sandbox = tool.sandbox
    if not script_tool.dependencies and not sandbox.dependencies:
        return sandbox.base_image, sandbox.base_image, None, []
    rows = [t for t in sandbox.tool_rows() if t.published or t.pk == tool.pk]
    registry = registry_for_sandbox(sandbox, tools=rows, include_unpublished=True)
    builder = sandbox_builder(sandbox, registry=registry)
    result = builder.ensure_image(sandbox.name, interrupt=interrupt)
    wheels = None if result.wheels is None else list(result.wheels)
    # By id: the wheels are that image's, and the tag may name another one by the time the
    # trial's container is made (removed and built again meanwhile, from another index).
    return result.tag, result.image_id or result.tag, rows, wheels


def trial_secrets_gate(*, tool: Tool, image_tools: list[Tool] | None) -> SecretsGate:
    """Return the gate of a trial's process: its tool's acceptance, and its image's wheels.

    In the base image the script runs alone and there is no wheel to import: its own
    acceptance decides. In the sandbox's image it imports its dependencies from `site/`,
    where every wheel of the image is unpacked (the sandbox's own, every tool's, one over
    another's files): as in a run, each of them must be accepted too.
    """
    if image_tools is None:
        return secrets_gate(tools=[tool])
    wheels = [t for t in image_tools if t.dependencies and t.pk != tool.pk]
    return secrets_gate(tools=[tool, *wheels], sandbox=tool.sandbox)


def trial_execute(*, trial_id: Any, interrupt: Interrupt | None = None) -> TrialRun:
    """Run a queued trial now, in this thread, and store its result; never raises on failure.

    A fired `interrupt` (its worker is stopping) ends the trial at once: its container is
    removed, and the trial says why it has no result.
    """
    stop = interrupt or Interrupt()
    trial = TrialRun.objects.select_related("tool", "tool__sandbox").get(pk=trial_id)
    TrialRun.objects.filter(pk=trial_id).update(state=TrialState.RUNNING)
    tool = trial.tool
    sandbox = tool.sandbox
    script_tool = script_tool_from_row(tool)
    withheld = ""
    recorded_wheels: list[str] | None = None
    try:
        if script_tool is None:
            raise ValueError(f"{tool.name} is no longer a script tool")
        if not trial.is_of_code(tool.code_digest):
            # The audit recorded the code asked for; a trial never runs other code (told by
            # the whole digest: other code may share the checksum).
            raise ValueError("the tool's code changed since this trial was asked for")
        image, start_from, image_tools, image_wheels = _trial_image(tool, script_tool, stop)
        if image_tools is not None and image_wheels is not None:
            recorded_wheels = sorted(image_wheels)  # the tool page offers these to accept
        limits = RunLimits.from_sandbox(sandbox.to_config())
        environment: dict[str, str] = {}
        gate = trial_secrets_gate(tool=tool, image_tools=image_tools)
        if image_tools is not None and not gate.shut:
            # As a run: the files in the image must be the ones an admin accepted, not only
            # the names and versions: the sandbox's, or those accepted on the tool page for
            # trials of the very code this trial runs (`trial_wheels_problem`).
            problem = trial_wheels_problem(
                tool=tool, code_digest=trial.code_digest, image=image_wheels
            )
            if problem:
                gate = SecretsGate(shut=problem, tools=gate.tools)
        if gate.tool_allowed(tool.name):
            environment = sandbox_secret_values(sandbox, names=list(script_tool.secrets))
            environment.update(
                keychain_environment(
                    sandbox=sandbox,
                    allowed=list(script_tool.secrets),
                    trial=trial,
                    lifetime=script_tool.timeout + START_GRACE_SECONDS,
                )
            )
        else:
            withheld = secrets_withheld_line(gate.withheld({tool.name: script_tool.secrets}))
            if withheld:  # "" for a tool with no secret to hold back
                logger.warning("trial %s: %s", trial_id, withheld)
        result = stop.run(
            trial_run(
                script_tool,
                dict(trial.args),
                image=start_from,
                limits=limits,
                environment=environment,
            )
        )
    except Exception as exc:  # the trial thread must record every failure
        logger.warning("trial %s did not finish: %s", trial_id, exc)
        # Stopped with its worker, the trial did start: it could not finish.
        how = "finish" if isinstance(exc, WorkInterrupted) else "run"
        result = TrialResult(
            TrialStatus.SANDBOX_ERROR, f"the trial could not {how}: {exc}", None, "", "", 0.0,
            dict(trial.args),
        )  # fmt: skip
        image = ""
    # What the script wrote is kept whatever it holds: a NUL becomes U+FFFD (`storable`).
    TrialRun.objects.filter(pk=trial_id).update(
        state=TrialState.DONE,
        status=result.status.value,
        passed=result.passed,
        # The person reading why a tool found its variable missing reads it here.
        message=storable_text(f"{result.message} ({withheld})" if withheld else result.message),
        exit_code=result.exit_code,
        stdout=storable_text(result.stdout),
        stderr=storable_text(result.stderr),
        data=storable_json(result.data),
        duration_ms=result.duration_ms,
        image=image,
        image_wheels=recorded_wheels,
        finished_at=timezone.now(),
    )
    KeychainToken.objects.filter(trial_id=trial_id).delete()
    trial.refresh_from_db()
    return trial


@holds_row("tool")
def trial_wheels_accept(
    *,
    tool: Tool,
    actor: AbstractBaseUser | None,
    seen_wheels: str | None = None,
    seen_digest: str | None = None,
) -> Tool:
    """Accept the wheel files of the image a trial of the tool's current code ran in, for
    trials of that code (team admins only); audited.

    A script tool with dependencies is tried, before it is published, in an image holding
    them, which the sandbox page never offers (it lists its own image, of published tools):
    its trial could never get its secrets, pass and be published. These files count for
    trials of this code alone (by its whole digest); runs keep to the sandbox's acceptance.
    `seen_wheels` is the `wheels_digest` of the files the page listed, `seen_digest` the
    `code_digest` it was shown (None: a caller that read the rows itself): files or code
    that changed since, say a new trial whose image fetched another file, are refused,
    never accepted unseen.
    """
    if actor is None or not actor_is_admin(actor=actor, team=tool.sandbox.team):
        raise PermissionDenied("Only team admins accept the wheel files of a tool's trials.")
    digest = tool.code_digest
    if seen_digest is not None and (not digest or seen_digest != digest):
        raise ValidationError(
            f"Tool {tool.name}'s code changed since you looked (now {tool.checksum}); "
            "nothing was accepted. Read its trial's wheel files again before accepting."
        )
    shown = trial_wheels_shown(tool)
    if shown is None:
        raise ValidationError(
            f"No trial of tool {tool.name}'s current code lists wheel files to accept; "
            "nothing was accepted. Run a trial first."
        )
    if seen_wheels is not None and seen_wheels != shown.digest:
        raise ValidationError(
            f"The wheel files of tool {tool.name}'s latest trial changed since you looked "
            f"(now {len(shown.files)} file(s)); nothing was accepted. "
            "Read them again before accepting."
        )
    if tool.trial_wheels_accepted_for(digest) == shown.files:
        return tool
    before, before_digest = tool.trial_accepted_wheels, tool.trial_accepted_code_digest
    with transaction.atomic():
        tool.trial_accepted_wheels = shown.files
        tool.trial_accepted_code_digest = digest
        tool.save(update_fields=["trial_accepted_wheels", "trial_accepted_code_digest"])
        catalog_change_announce(
            sandbox=tool.sandbox,
            actor=actor,
            action="trial_wheels_accepted",
            target=f"tool {tool.name}",
            changes={
                "trial_accepted_wheels": (before, shown.files),
                "trial_accepted_code_digest": (before_digest or None, digest),
            },
            # The code they are accepted for, whole (as runs name it): not its checksum.
            sha256=digest,
        )
    return tool


# The keychain


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def keychain_token_issue(
    *,
    sandbox: Sandbox,
    allowed: Iterable[str],
    lifetime: float,
    run: Run | None = None,
    trial: TrialRun | None = None,
) -> str:
    """Return a new bearer token for one run or trial; only its hash is stored."""
    token = token_secrets.token_urlsafe(32)
    KeychainToken.objects.create(
        token_sha256=_digest(token),
        sandbox=sandbox,
        run=run,
        trial=trial,
        allowed=sorted(set(allowed)),
        expires_at=timezone.now() + datetime.timedelta(seconds=lifetime + KEYCHAIN_GRACE_SECONDS),
    )
    return token


def keychain_environment(
    *,
    sandbox: Sandbox,
    allowed: list[str],
    lifetime: float,
    run: Run | None = None,
    trial: TrialRun | None = None,
) -> dict[str, str]:
    """Return the env that lets a network-enabled sandbox reach /v1/key; empty otherwise.

    Without network a sandbox cannot reach the server, and it already has its declared
    secrets as env; a token it cannot use would only be one more thing to leak.
    """
    url = settings.JAZZMINE_KEYCHAIN_URL
    if not (sandbox.network and url and allowed):
        return {}
    token = keychain_token_issue(
        sandbox=sandbox, allowed=allowed, lifetime=lifetime, run=run, trial=trial
    )
    return {KEYCHAIN_URL_ENV: url.rstrip("/") + "/v1/key", KEYCHAIN_TOKEN_ENV: token}


def keychain_environment_per_tool(
    *,
    sandbox: Sandbox,
    lifetime: float,
    run: Run | None = None,
    tool_allowed: Callable[[str], bool] | None = None,
) -> dict[str, str]:
    """Return the keychain env of a run: one token per published script tool, for its secrets.

    A shared token would answer one tool for another tool's secrets; each tool's runner
    (`jazzmine.scripttools.adapter`) hands its script only the token issued under its name.
    """
    url = settings.JAZZMINE_KEYCHAIN_URL
    if not (sandbox.network and url):
        return {}  # checked first: no keychain means no reading of tools before a run starts
    scripts = sandbox.tools.filter(published=True, kind=ToolKind.SCRIPT)
    # No token for code an admin has not accepted: it would read the secrets it scopes.
    # (Preparation also issues none at all while a Python tool's code waits for an admin.)
    wanted = {t.name: sorted(set(t.secrets)) for t in scripts if t.secrets and t.code_accepted}
    if tool_allowed is not None:
        # Nor for a tool the run's secrets gate refuses (a wheel it loads waits for an admin).
        wanted = {name: names for name, names in wanted.items() if tool_allowed(name)}
    if not wanted:
        return {}
    env = {KEYCHAIN_URL_ENV: url.rstrip("/") + "/v1/key"}
    for name, secrets in sorted(wanted.items()):
        env[KEYCHAIN_TOKEN_PREFIX + name] = keychain_token_issue(
            sandbox=sandbox, allowed=secrets, lifetime=lifetime, run=run
        )
    return env


def keychain_token_tool(variable: str) -> str | None:
    """Name the script tool a run's keychain variable is for (None: not one tool's)."""
    if variable.startswith(KEYCHAIN_TOKEN_PREFIX):
        return variable[len(KEYCHAIN_TOKEN_PREFIX) :] or None
    return None


def keychain_tokens_revoke(*, run_id: Any) -> int:
    """Forget the keychain tokens of a run that has ended."""
    deleted, _ = KeychainToken.objects.filter(run_id=run_id).delete()
    return deleted


@dataclass(frozen=True)
class KeychainAnswer:
    """What /v1/key answers: an HTTP status and a JSON body."""

    status: int
    body: dict[str, str]


def keychain_lookup(*, token: str, key: str) -> KeychainAnswer:
    """Answer a sandbox's request for one secret, as the spec's keychain endpoint does."""
    row = (
        KeychainToken.objects.select_related("run", "trial", "sandbox")
        .filter(token_sha256=_digest(token))
        .first()
        if token
        else None
    )
    if row is None:
        return KeychainAnswer(403, {"error": "unknown token"})
    ended = (
        row.expires_at <= timezone.now()
        or (row.run is not None and row.run.status in RunStatus.finished())
        # A stop was asked: the run stays `running` until its worker kills the sandbox (at
        # once, or only at the timeout if the worker never heard), and that sandbox is what
        # the person wanted stopped: it reads no more secrets meanwhile (fail closed).
        or (row.run is not None and bool(row.run.cancel_reason))
        or (row.trial is not None and row.trial.state == TrialState.DONE)
    )
    if ended:
        return KeychainAnswer(403, {"error": "the run of this token has ended"})
    # 404 for a key the tools do not declare, as for one that has no value: the sandbox
    # learns nothing about secrets that are not its own.
    if key not in row.allowed:
        return KeychainAnswer(404, {"error": f"key {key} not found"})
    value = sandbox_secret_values(row.sandbox, names=[key]).get(key, "")
    if not value:
        return KeychainAnswer(404, {"error": f"key {key} not found"})
    return KeychainAnswer(200, {"value": value})
