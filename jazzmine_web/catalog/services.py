"""Writes of the catalog, and `registry_for_sandbox`: the one way any app gets a registry."""

from __future__ import annotations

import ast
import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Concat
from django.utils import timezone

from jazzmine.core.tools import RegisteredTool, SandboxConfig, ToolParameter, ToolRegistry
from jazzmine.core.tools import Tool as CoreTool
from jazzmine.requirements import RequirementError, requirements_check
from jazzmine.scripttools import ScriptTool, ScriptToolError, register_script_tool
from jazzmine.scripttools.model import DEFAULT_TIMEOUT

from ..celery import app as celery_app
from ..studio.claims import heartbeat_cutoff, never_started_cutoff, row_claim
from ..teams.models import Role, Team
from ..teams.selectors import user_has_team_role
from . import live
from .crypto import encrypt
from .limits import bound, bounds_problems
from .models import BuildStatus, ImageBuild, Sandbox, SecretValue, Tool, ToolKind, ToolVersion
from .signals import catalog_changed

logger = logging.getLogger(__name__)

SANDBOX_CONFIG_FIELDS = (
    "dependencies",
    "secrets",
    "network",
    "memory_mb",
    "cpus",
    "pids_limit",
    "timeout_seconds",
    "max_output_bytes",
    "base_image",
    "backend",
)
# Limits of bash scripts: sandbox columns that are not part of the core's SandboxConfig.
BASH_LIMIT_FIELDS = ("bash_max_commands", "bash_max_loop_iterations", "bash_timeout_seconds")
TOOL_FIELDS = (
    "description",
    "parameters",
    "dependencies",
    "secrets",
    "source",
    "always_allow",
    "tags",
    "kind",
)
# What changes what review means or what a run may reach: team admins only (issue 10, class 3).
# Every config field but the dependencies (the code a run may use, not what it may reach).
ADMIN_SANDBOX_FIELDS = (
    *(f for f in SANDBOX_CONFIG_FIELDS if f != "dependencies"),
    *BASH_LIMIT_FIELDS,
)
ADMIN_TOOL_FIELDS = ("always_allow", "secrets")
# Sandbox numbers with deployment bounds (`limits.py`).
BOUNDED_SANDBOX_FIELDS = (
    "memory_mb",
    "cpus",
    "pids_limit",
    "timeout_seconds",
    "max_output_bytes",
    *BASH_LIMIT_FIELDS,
)


# Roles and audit


def actor_is_admin(*, actor: AbstractBaseUser | None, team: Team) -> bool:
    """Tell whether a person may change what review means in a team's sandboxes."""
    if actor is None or not actor.is_authenticated:
        return False
    return bool(getattr(actor, "is_superuser", False)) or user_has_team_role(
        user=actor, team=team, role=Role.ADMIN
    )


def _admin_check(*, actor: AbstractBaseUser | None, team: Team, fields: Iterable[str]) -> None:
    """Refuse a change of admin-only fields by anyone but a team admin.

    `actor` None is a trusted caller (a management command, the demo seed, a test fixture);
    every web surface passes the person making the request.
    """
    names = sorted(set(fields))
    if not names or actor is None or actor_is_admin(actor=actor, team=team):
        return
    raise PermissionDenied(f"Only team admins change {', '.join(names)}.")


def _shown(value: Any) -> Any:
    """Return a value as the audit keeps it: short text, JSON-safe."""
    if isinstance(value, str) and len(value) > 120:
        return value[:117] + "..."
    if isinstance(value, (dict, list)) and len(json.dumps(value, default=str)) > 300:
        return "(changed)"
    return value


def _announce(
    *,
    sandbox: Sandbox,
    actor: AbstractBaseUser | None,
    action: str,
    target: str,
    changes: dict[str, tuple[Any, Any]] | None = None,
    note: str = "",
    sha256: str = "",
) -> None:
    """Tell listeners (the audit trail) what changed, by whom, before → after."""
    kept = {k: [_shown(before), _shown(after)] for k, (before, after) in (changes or {}).items()}
    if not note:
        parts = [f"{k}: {json.dumps(b, default=str)} → {json.dumps(a, default=str)}"
                 for k, (b, a) in kept.items()]  # fmt: skip
        note = f"{target}: " + ("; ".join(parts) if parts else action.replace("_", " "))
    catalog_changed.send(
        sender=Sandbox,
        sandbox=sandbox,
        actor=actor if actor is not None and actor.is_authenticated else None,
        action=action,
        target=target,
        changes=kept,
        note=note,
        sha256=sha256,
    )


def _requirements(dependencies: Any) -> list[str]:
    """Return checked requirements; raise ValidationError naming the bad line."""
    try:
        return requirements_check(dependencies or [])
    except RequirementError as exc:
        raise ValidationError(f"dependencies {exc}") from None


def base_images_allowed() -> list[str]:
    """Return the base images a sandbox may name (the operator's list)."""
    return list(settings.JAZZMINE_BASE_IMAGES)


def _base_image_check(base_image: str) -> None:
    if base_image not in base_images_allowed():
        raise ValidationError(
            f"base image {base_image!r} is not offered here; choose one of "
            f"{', '.join(base_images_allowed())}"
        )


def _bounds_check(values: dict[str, Any]) -> None:
    problems = bounds_problems({k: v for k, v in values.items() if k in BOUNDED_SANDBOX_FIELDS})
    if problems:
        raise ValidationError(list(problems.values()))


# Registry


def _tool_parameters(rows: list[dict[str, Any]]) -> list[ToolParameter]:
    return [ToolParameter.from_dict(dict(row)) for row in rows]


def registry_for_sandbox(
    sandbox: Sandbox, *, tools: Iterable[Tool] | None = None, include_unpublished: bool = False
) -> ToolRegistry:
    """Build the core `ToolRegistry` of a sandbox from its rows, without executing any tool.

    Every prompt, checksum and image in the web app comes from this registry, so they are
    exactly what `jazzmine.core.tools` computes. Pass `tools` to reuse rows already loaded.
    Unpublished tools (script tools without a passed trial) are left out unless asked for:
    they are never offered to an LLM nor baked into an image.
    """
    registry = ToolRegistry()
    registry.register_sandbox(sandbox.to_config())
    rows = tools if tools is not None else sandbox.tools.all()
    for row in sorted(rows, key=lambda t: t.name):
        if not row.published and not include_unpublished:
            continue
        if row.kind == ToolKind.SCRIPT:
            script_tool = script_tool_from_row(row)
            if script_tool is not None:
                register_script_tool(registry, script_tool, sandbox=sandbox.name)
            continue
        registry.register_source(
            row.source,
            sandbox=sandbox.name,
            description=row.description,
            parameters=_tool_parameters(row.parameters),
            dependencies=list(row.dependencies),
            secrets=list(row.secrets),
            name=row.name,
        )
    return registry


def script_tool_from_row(row: Tool) -> ScriptTool | None:
    """Return the script tool a catalog row holds (None for a row that is not a whole one)."""
    if row.kind != ToolKind.SCRIPT or not row.runtime:
        return None
    try:
        return ScriptTool(
            name=row.name,
            description=row.description,
            source=row.source,
            parameters=dict(row.schema or {"type": "object", "properties": {}}),
            runtime=row.runtime,  # type: ignore[arg-type]
            always_allow=row.always_allow,
            timeout=float(row.timeout_seconds or DEFAULT_TIMEOUT),
            secrets=list(row.secrets),
            dependencies=list(row.dependencies),
            extra=dict(row.extra or {}),
        )
    except ScriptToolError:
        # A bad row must not take every page of its sandbox down with it.
        logger.warning("script tool row %s is not a valid script tool", row.pk)
        return None


def script_tool_check(*, tool: ScriptTool, sandbox_name: str = "default") -> RegisteredTool:
    """Register a script tool in a scratch registry; raise ValidationError on any problem."""
    _requirements(tool.dependencies)
    problem = bound("script_timeout_seconds").problem("timeout", tool.timeout)
    if problem:
        raise ValidationError(problem)
    scratch = ToolRegistry()
    if sandbox_name != "default":
        scratch.register_sandbox(SandboxConfig(name=sandbox_name))
    try:
        return register_script_tool(scratch, tool, sandbox=sandbox_name)
    except (TypeError, ValueError) as exc:
        raise ValidationError(str(exc)) from exc


def _script_row_values(tool: ScriptTool, registered: RegisteredTool) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": [p.to_dict() for p in registered.tool.parameters],
        "dependencies": list(tool.dependencies),
        "secrets": list(tool.secrets),
        "source": tool.source,
        "always_allow": tool.always_allow,
        "runtime": tool.runtime,
        "schema": dict(tool.parameters),
        "timeout_seconds": float(tool.timeout),
        "extra": dict(tool.extra),
    }


def script_tool_save(
    *,
    sandbox: Sandbox,
    tool: ScriptTool,
    existing: Tool | None = None,
    author: AbstractBaseUser | None = None,
    note: str = "",
    tags: list[str] | None = None,
    actor: AbstractBaseUser | None = None,
) -> tuple[Tool, ToolChange]:
    """Create or change a script tool row; new code makes a new version and unpublishes it.

    A script tool is published only after a trial run of its current code passes, so any
    change of code, runtime, timeout or dependencies takes it out of the LLM's reach again.
    `always_allow` and `secrets` are admin-only (`actor`); changing them makes a version too.
    """
    registered = script_tool_check(tool=tool, sandbox_name=sandbox.name)
    values = _script_row_values(tool, registered)
    clash = Tool.objects.filter(sandbox=sandbox, name=tool.name)
    if existing is not None:
        clash = clash.exclude(pk=existing.pk)
    if clash.exists():
        raise ValidationError(f"Sandbox {sandbox.name!r} already has a tool named {tool.name!r}")
    with transaction.atomic():
        if existing is None:
            _admin_check(actor=actor, team=sandbox.team, fields=_admin_fields_of_new(values))
            row = Tool(
                sandbox=sandbox,
                kind=ToolKind.SCRIPT,
                function_name=registered.function_name,
                is_async=registered.is_async,
                checksum=registered.checksum,
                tags=_clean_tags(tags or []),
                published=False,
                **values,
            )
            _accept_if_admin(tool=row, actor=actor)
            row.save()
            version = _version_create(tool=row, author=author, note=note or "Created")
            _announce_tool(tool=row, actor=actor, action="tool_created", before={}, version=version)
            return row, ToolChange(changed=True, new_version=version)
        if tags is not None:
            values["tags"] = _clean_tags(tags)
        changed = {k: v for k, v in values.items() if getattr(existing, k) != v}
        code_changed = registered.checksum != existing.checksum
        if not changed and not code_changed:
            return existing, ToolChange(changed=False)
        prompt_changed = tool_prompt(existing) != registered.tool.build_prompt()
        _admin_check(actor=actor, team=sandbox.team, fields=set(changed) & set(ADMIN_TOOL_FIELDS))
        before = _tool_audit_state(existing)
        for key, value in changed.items():
            setattr(existing, key, value)
        existing.kind = ToolKind.SCRIPT
        existing.function_name = registered.function_name
        existing.checksum = registered.checksum
        if code_changed:
            existing.published = False
            existing.published_at = None
        if code_changed or "always_allow" in changed:
            _accept_if_admin(tool=existing, actor=actor)
        existing.save()
        # tool.json is versioned whole (`tool_json`): any change of it is a version, the
        # prompt's fields included; tags alone are not.
        version = (
            _version_create(tool=existing, author=author, note=note or "Edited")
            if code_changed or prompt_changed or set(changed) - {"tags"}
            else None
        )
        _announce_tool(
            tool=existing, actor=actor, action="tool_changed", before=before, version=version
        )
    return existing, ToolChange(
        changed=True,
        new_version=version,
        code_changed=code_changed,
        prompt_changed=prompt_changed,
    )


def _admin_fields_of_new(values: dict[str, Any]) -> list[str]:
    """Return the admin-only fields a new tool sets away from their safe defaults."""
    fields = []
    if values.get("always_allow"):
        fields.append("always_allow")
    if values.get("secrets"):
        fields.append("secrets")
    return fields


def _accept_if_admin(*, tool: Tool, actor: AbstractBaseUser | None) -> None:
    """Accept the tool's current code as always-allowed when an admin wrote this change."""
    if tool.always_allow and actor_is_admin(actor=actor, team=tool.sandbox.team):
        tool.always_allow_accepted_checksum = tool.checksum
        tool.always_allow_accepted_by = actor  # type: ignore[assignment]
        tool.always_allow_accepted_at = timezone.now()


def _tool_audit_state(tool: Tool) -> dict[str, Any]:
    """Return what the audit compares of a tool: its fields, code checksum and effective flag."""
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": list(tool.parameters),
        "dependencies": list(tool.dependencies),
        "secrets": list(tool.secrets),
        "always_allow": tool.always_allow,
        "always_allowed_in_effect": tool.is_always_allowed,
        "code_checksum": tool.checksum,
        "tags": list(tool.tags),
    }


def _announce_tool(
    *,
    tool: Tool,
    actor: AbstractBaseUser | None,
    action: str,
    before: dict[str, Any],
    version: ToolVersion | None = None,
    note: str = "",
) -> None:
    after = _tool_audit_state(tool) if action != "tool_deleted" else {}
    keys = list(dict.fromkeys([*before, *after]))
    changes = {k: (before.get(k), after.get(k)) for k in keys if before.get(k) != after.get(k)}
    target = f"tool {tool.name}" + (f" v{version.number}" if version is not None else "")
    if not note and tool.always_allow_pending and action != "tool_deleted":
        note = ""  # the generic before → after line, plus the pending remark below
        changes["always_allow_pending"] = (None, "waits for an admin to accept this code")
    _announce(
        sandbox=tool.sandbox,
        actor=actor,
        action=action,
        target=target,
        changes=changes,
        note=note,
        sha256=tool.checksum,
    )


def tool_publish(*, tool: Tool, published: bool = True) -> Tool:
    """Offer a tool to LLMs (or withdraw it); callers check the trial gate first."""
    tool.published = published
    tool.published_at = timezone.now() if published else None
    tool.save(update_fields=["published", "published_at", "updated_at"])
    return tool


def _accepted_arguments(source: str) -> set[str] | None:
    """Return the argument names of the source's function (None when it takes **kwargs)."""
    node = next(
        n for n in ast.parse(source).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    )
    if node.args.kwarg is not None:
        return None
    args = node.args
    return {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}


def tool_spec_check(
    *,
    name: str,
    description: str,
    parameters: list[dict[str, Any]],
    dependencies: list[str],
    secrets: list[str],
    source: str,
    sandbox_name: str = "default",
) -> RegisteredTool:
    """Register a tool's fields in a scratch registry; raise ValidationError on any problem."""
    dependencies = _requirements(dependencies)
    scratch = ToolRegistry()
    if sandbox_name != "default":
        scratch.register_sandbox(SandboxConfig(name=sandbox_name))
    try:
        params = _tool_parameters(parameters)
        registered = scratch.register_source(
            source,
            sandbox=sandbox_name,
            description=description,
            parameters=params,
            dependencies=dependencies,
            secrets=secrets,
            name=name or None,
        )
    except (TypeError, ValueError) as exc:
        raise ValidationError(str(exc)) from exc
    accepted = _accepted_arguments(registered.source)
    if accepted is not None:
        unknown = [p.name for p in params if p.name not in accepted]
        if unknown:
            raise ValidationError(
                f"Tool {registered.name!r} documents parameters {unknown} that "
                f"{registered.function_name}() does not accept"
            )
    return registered


# Sandboxes


def sandbox_config_check(*, name: str, **fields: Any) -> SandboxConfig:
    """Validate sandbox fields with the core's SandboxConfig; raise ValidationError if bad.

    Dependencies must be plain requirements, the base image one the operator offers, and
    the numbers inside the deployment's bounds.
    """
    if "dependencies" in fields:
        fields["dependencies"] = _requirements(fields["dependencies"])
    if "base_image" in fields:
        _base_image_check(fields["base_image"])
    _bounds_check(fields)
    try:
        return SandboxConfig(name=name, **fields)
    except (TypeError, ValueError) as exc:
        raise ValidationError(str(exc)) from exc


def _sandbox_defaults() -> dict[str, Any]:
    """Return what a new sandbox holds when nobody chose otherwise."""
    values = {f: Sandbox._meta.get_field(f).get_default() for f in ADMIN_SANDBOX_FIELDS}
    values["base_image"] = settings.JAZZMINE_BASE_IMAGE
    return values


def sandbox_create(
    *,
    team: Team,
    name: str,
    description: str = "",
    actor: AbstractBaseUser | None = None,
    **config: Any,
) -> Sandbox:
    """Create a sandbox in a team; only admins choose other than the defaults of admin fields."""
    config.setdefault("base_image", settings.JAZZMINE_BASE_IMAGE)
    defaults = _sandbox_defaults()
    _admin_check(
        actor=actor,
        team=team,
        fields=[f for f in ADMIN_SANDBOX_FIELDS if f in config and config[f] != defaults[f]],
    )
    bash = _bash_limits_check({f: config.pop(f) for f in BASH_LIMIT_FIELDS if f in config})
    checked = sandbox_config_check(name=name, **config)
    if Sandbox.objects.filter(team=team, name=name).exists():
        raise ValidationError(f"Team {team.slug!r} already has a sandbox named {name!r}")
    values = {f: getattr(checked, f) for f in SANDBOX_CONFIG_FIELDS}
    with transaction.atomic():
        sandbox = Sandbox.objects.create(
            team=team, name=name, description=description, **values, **bash
        )
        _announce(
            sandbox=sandbox,
            actor=actor,
            action="sandbox_created",
            target=f"sandbox {name}",
            changes={k: (None, v) for k, v in {**values, **bash}.items() if v != defaults.get(k)},
        )
    return sandbox


def _bash_limits_check(values: dict[str, Any]) -> dict[str, Any]:
    """Refuse bash limits that are not numbers inside the deployment's bounds."""
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ValidationError(f"{key} must be a positive number, not {value!r}")
    _bounds_check(values)
    return values


def sandbox_update(
    *, sandbox: Sandbox, actor: AbstractBaseUser | None = None, **changes: Any
) -> bool:
    """Change a sandbox's fields; tell whether anything changed.

    Only the fields that change are checked against today's rules (an older row keeps what
    it has until someone changes it); admin-only fields need a team admin.
    """
    allowed = {"name", "description", *SANDBOX_CONFIG_FIELDS, *BASH_LIMIT_FIELDS}
    unknown = set(changes) - allowed
    if unknown:
        raise TypeError(f"sandbox_update got unknown fields {sorted(unknown)}")
    changed = {k: v for k, v in changes.items() if getattr(sandbox, k) != v}
    if not changed:
        return False
    _admin_check(actor=actor, team=sandbox.team, fields=set(changed) & set(ADMIN_SANDBOX_FIELDS))
    _bash_limits_check({k: v for k, v in changed.items() if k in BASH_LIMIT_FIELDS})
    if "dependencies" in changed:
        changed["dependencies"] = _requirements(changed["dependencies"])
    if "base_image" in changed:
        _base_image_check(changed["base_image"])
    _bounds_check(changed)
    merged = {f: changed.get(f, getattr(sandbox, f)) for f in SANDBOX_CONFIG_FIELDS}
    new_name = changed.get("name", sandbox.name)
    try:
        SandboxConfig(name=new_name, **merged)
    except (TypeError, ValueError) as exc:
        raise ValidationError(str(exc)) from exc
    if (
        "name" in changed
        and Sandbox.objects.filter(team=sandbox.team, name=new_name).exclude(pk=sandbox.pk).exists()
    ):
        raise ValidationError(
            f"Team {sandbox.team.slug!r} already has a sandbox named {new_name!r}"
        )
    before = {k: getattr(sandbox, k) for k in changed}
    with transaction.atomic():
        for key, value in changed.items():
            setattr(sandbox, key, value)
        sandbox.save()
        _announce(
            sandbox=sandbox,
            actor=actor,
            action="sandbox_changed",
            target=f"sandbox {sandbox.name}",
            changes={k: (before[k], changed[k]) for k in changed},
        )
    return True


def sandbox_delete(*, sandbox: Sandbox, actor: AbstractBaseUser | None = None) -> None:
    """Delete a sandbox with its tools, versions, secrets and builds (team admins only)."""
    _admin_check(actor=actor, team=sandbox.team, fields=["sandboxes (delete)"])
    sandbox.delete()


# Tools


def _version_create(*, tool: Tool, author: AbstractBaseUser | None, note: str) -> ToolVersion:
    last = tool.versions.order_by("-number").values_list("number", flat=True).first() or 0
    return ToolVersion.objects.create(
        tool=tool,
        number=last + 1,
        source=tool.source,
        dependencies=list(tool.dependencies),
        checksum=tool.checksum,
        always_allow=tool.always_allow,
        secrets=list(tool.secrets),
        tool_json=_tool_json_of(tool),
        interface=tool_interface(tool),
        prompt=tool_prompt(tool),
        author=author,
        note=note[:300],
    )


# What the LLM reads of a tool: the `<tool>` XML is built from these fields and nothing else
# (`jazzmine.core.tools.Tool.build_prompt`); a change of any is a change of the prompt.
PROMPT_FIELDS = ("name", "description", "parameters")


def tool_interface(tool: Tool) -> dict[str, Any]:
    """Return the fields of a tool row that the XML prompt is built from."""
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": [dict(p) for p in tool.parameters],
    }


def tool_prompt(tool: Tool) -> str | None:
    """Return the `<tool>` XML the LLM reads for a tool row (None for a row the core refuses)."""
    try:
        return CoreTool(
            name=tool.name,
            description=tool.description,
            parameters=_tool_parameters(tool.parameters),
        ).build_prompt()
    except (TypeError, ValueError):
        return None


def _tool_json_of(tool: Tool) -> dict[str, Any]:
    script_tool = script_tool_from_row(tool)
    if script_tool is None:
        return {}
    return {"runtime": script_tool.runtime, "tool.json": script_tool.to_json_dict()}


def tool_create(
    *,
    sandbox: Sandbox,
    name: str,
    description: str,
    source: str,
    parameters: list[dict[str, Any]] | None = None,
    dependencies: list[str] | None = None,
    secrets: list[str] | None = None,
    always_allow: bool = False,
    tags: list[str] | None = None,
    kind: str = ToolKind.PYTHON,
    author: AbstractBaseUser | None = None,
    note: str = "Created",
    actor: AbstractBaseUser | None = None,
) -> Tool:
    """Create a tool and its first version; `always_allow` and `secrets` are admin-only."""
    registered = tool_spec_check(
        name=name,
        description=description,
        parameters=parameters or [],
        dependencies=dependencies or [],
        secrets=secrets or [],
        source=source,
        sandbox_name=sandbox.name,
    )
    _admin_check(
        actor=actor,
        team=sandbox.team,
        fields=_admin_fields_of_new({"always_allow": always_allow, "secrets": secrets}),
    )
    if Tool.objects.filter(sandbox=sandbox, name=registered.name).exists():
        raise ValidationError(
            f"Sandbox {sandbox.name!r} already has a tool named {registered.name!r}"
        )
    with transaction.atomic():
        tool = Tool(
            sandbox=sandbox,
            name=registered.name,
            description=description,
            parameters=[p.to_dict() for p in registered.tool.parameters],
            dependencies=list(dependencies or []),
            secrets=list(secrets or []),
            kind=kind,
            source=registered.source,
            function_name=registered.function_name,
            is_async=registered.is_async,
            always_allow=always_allow,
            tags=_clean_tags(tags or []),
            checksum=registered.checksum,
        )
        _accept_if_admin(tool=tool, actor=actor)
        tool.save()
        version = _version_create(tool=tool, author=author, note=note)
        _announce_tool(tool=tool, actor=actor, action="tool_created", before={}, version=version)
    return tool


def _clean_tags(tags: Iterable[str]) -> list[str]:
    cleaned = {t.strip().lower().replace(",", "-") for t in tags}
    return sorted(t for t in cleaned if t)


@dataclass(frozen=True)
class ToolChange:
    """What `tool_update` did: whether anything changed, the version it made, and what kind."""

    changed: bool
    new_version: ToolVersion | None = None
    # The code or dependencies changed: a new checksum, so the sandbox's image is rebuilt.
    code_changed: bool = False
    # The XML the LLM reads changed (name, description, parameters).
    prompt_changed: bool = False
    remarks: tuple[str, ...] = ()

    def summary(self) -> str:
        """Return what the change was, as a person reads it."""
        if not self.changed:
            return "nothing changed: no new version"
        if self.new_version is None:
            return "neither the prompt nor the code changed: no new version"
        if self.code_changed:
            both = "the prompt and the code" if self.prompt_changed else "the code"
            return f"{both} changed: a new checksum, the image needs a rebuild"
        if self.prompt_changed:
            return "the prompt changed, the code did not: same checksum, no image rebuild"
        return "what review allows changed"


def tool_update(
    *,
    tool: Tool,
    author: AbstractBaseUser | None = None,
    note: str = "",
    actor: AbstractBaseUser | None = None,
    **changes: Any,
) -> ToolChange:
    """Change a tool; a change of the prompt, code, dependencies, secrets or always_allow is a
    new version (with `note`). Only code and dependencies change the checksum (and the image).

    A member's code change to an always-allowed tool is stored but not in effect for review
    until an admin accepts it (`tool_always_allow_accept`); an admin's own change is accepted.
    """
    unknown = set(changes) - {"name", *TOOL_FIELDS}
    if unknown:
        raise TypeError(f"tool_update got unknown fields {sorted(unknown)}")
    if "tags" in changes:
        changes["tags"] = _clean_tags(changes["tags"])
    merged = {f: changes.get(f, getattr(tool, f)) for f in ("name", *TOOL_FIELDS)}
    registered = tool_spec_check(
        name=merged["name"],
        description=merged["description"],
        parameters=merged["parameters"],
        dependencies=merged["dependencies"],
        secrets=merged["secrets"],
        source=merged["source"],
        sandbox_name=tool.sandbox.name,
    )
    merged["source"] = registered.source
    merged["parameters"] = [p.to_dict() for p in registered.tool.parameters]
    merged["name"] = registered.name
    changed = {k: v for k, v in merged.items() if getattr(tool, k) != v}
    if not changed:
        return ToolChange(changed=False)
    _admin_check(actor=actor, team=tool.sandbox.team, fields=set(changed) & set(ADMIN_TOOL_FIELDS))
    if (
        "name" in changed
        and Tool.objects.filter(sandbox=tool.sandbox, name=merged["name"])
        .exclude(pk=tool.pk)
        .exists()
    ):
        raise ValidationError(
            f"Sandbox {tool.sandbox.name!r} already has a tool named {merged['name']!r}"
        )
    code_changed = registered.checksum != tool.checksum
    prompt_changed = tool_prompt(tool) != registered.tool.build_prompt()
    before = _tool_audit_state(tool)
    with transaction.atomic():
        for key, value in changed.items():
            setattr(tool, key, value)
        tool.function_name = registered.function_name
        tool.is_async = registered.is_async
        tool.checksum = registered.checksum
        if code_changed or "always_allow" in changed:
            _accept_if_admin(tool=tool, actor=actor)
        tool.save()
        version = (
            _version_create(tool=tool, author=author, note=note or "Edited")
            if code_changed or prompt_changed or set(changed) & set(ADMIN_TOOL_FIELDS)
            else None
        )
        _announce_tool(
            tool=tool, actor=actor, action="tool_changed", before=before, version=version
        )
    return ToolChange(
        changed=True,
        new_version=version,
        code_changed=code_changed,
        prompt_changed=prompt_changed,
    )


def tool_always_allow_accept(*, tool: Tool, actor: AbstractBaseUser | None) -> Tool:
    """Accept a tool's current code as always-allowed (team admins only); audited."""
    if actor is None or not actor_is_admin(actor=actor, team=tool.sandbox.team):
        raise PermissionDenied("Only team admins accept a tool as always-allowed.")
    if not tool.always_allow:
        raise ValidationError(f"Tool {tool.name!r} does not ask to be always allowed")
    if tool.is_always_allowed:
        return tool
    before = tool.always_allow_accepted_checksum
    with transaction.atomic():
        _accept_if_admin(tool=tool, actor=actor)
        tool.save(
            update_fields=[
                "always_allow_accepted_checksum",
                "always_allow_accepted_by",
                "always_allow_accepted_at",
            ]
        )
        _announce(
            sandbox=tool.sandbox,
            actor=actor,
            action="tool_accepted",
            target=f"tool {tool.name}",
            changes={"accepted_code_checksum": (before or None, tool.checksum)},
            sha256=tool.checksum,
        )
    return tool


def tool_rollback(
    *,
    tool: Tool,
    version: ToolVersion,
    author: AbstractBaseUser | None = None,
    actor: AbstractBaseUser | None = None,
) -> ToolChange:
    """Put a tool back to an earlier version (as a new version): code, dependencies, the
    prompt (name, description, parameters), and the secrets and always_allow the version
    recorded (admin-only when they differ). What a version did not record is kept as it is."""
    if version.tool_id != tool.pk:
        raise ValidationError(f"Version {version.pk} is not a version of tool {tool.name!r}")
    if tool.kind == ToolKind.SCRIPT and version.tool_json:
        try:
            old = ScriptTool.from_json_dict(
                version.tool_json.get("tool.json"),
                source=version.source,
                runtime=version.tool_json.get("runtime", "python3"),
            )
        except ScriptToolError as exc:
            raise ValidationError(str(exc)) from exc
        _, change = script_tool_save(
            sandbox=tool.sandbox,
            tool=old,
            existing=tool,
            author=author,
            note=f"Rolled back to v{version.number}",
            actor=actor,
        )
        return change
    restored: dict[str, Any] = {
        "source": version.source,
        "dependencies": list(version.dependencies),
    }
    # Versions recorded before these fields existed say nothing about them: keep today's.
    if version.always_allow is not None:
        restored["always_allow"] = version.always_allow
    if version.secrets is not None:
        restored["secrets"] = list(version.secrets)
    remarks: tuple[str, ...] = ()
    if version.interface is not None:
        restored.update({k: version.interface[k] for k in PROMPT_FIELDS if k in version.interface})
    else:
        remarks = (
            f"v{version.number} was recorded before prompts were versioned: the name, "
            "description and parameters were kept as they are",
        )
    change = tool_update(
        tool=tool,
        author=author,
        note=f"Rolled back to v{version.number}",
        actor=actor,
        **restored,
    )
    return replace(change, remarks=remarks) if remarks else change


def tool_delete(*, tool: Tool, actor: AbstractBaseUser | None = None) -> None:
    """Delete a tool and its versions (team admins only); the audit keeps the deletion."""
    _admin_check(actor=actor, team=tool.sandbox.team, fields=["tools (delete)"])
    with transaction.atomic():
        _announce_tool(
            tool=tool, actor=actor, action="tool_deleted", before=_tool_audit_state(tool)
        )
        tool.delete()


# Secrets


def secret_value_set(
    *,
    sandbox: Sandbox,
    name: str,
    value: str,
    user: AbstractBaseUser | None,
    actor: AbstractBaseUser | None = None,
) -> SecretValue:
    """Store (or replace) a secret's value, encrypted; the value is never shown again."""
    _admin_check(actor=actor, team=sandbox.team, fields=["secret values"])
    if not value:
        raise ValidationError(f"Give a value for {name!r}, or clear it instead")
    with transaction.atomic():
        had = SecretValue.objects.filter(sandbox=sandbox, name=name).exists()
        secret, _ = SecretValue.objects.update_or_create(
            sandbox=sandbox,
            name=name,
            defaults={"ciphertext": encrypt(value), "set_by": user},
        )
        _announce(
            sandbox=sandbox,
            actor=actor or user,
            action="secret_set",
            target=f"secret {name}",
            changes={"value": ("set" if had else "not set", "replaced" if had else "set")},
        )
    return secret


def secret_value_clear(
    *, sandbox: Sandbox, name: str, actor: AbstractBaseUser | None = None
) -> bool:
    """Forget a secret's value; tell whether there was one."""
    _admin_check(actor=actor, team=sandbox.team, fields=["secret values"])
    with transaction.atomic():
        deleted, _ = SecretValue.objects.filter(sandbox=sandbox, name=name).delete()
        if deleted:
            _announce(
                sandbox=sandbox,
                actor=actor,
                action="secret_cleared",
                target=f"secret {name}",
                changes={"value": ("set", "not set")},
            )
    return deleted > 0


# Image builds


class BuildLineEvent(TypedDict):
    """A channel-layer message: one more line of a build's log."""

    type: str  # "build.line"
    build_id: int
    seq: int
    line: str


class BuildStatusEvent(TypedDict):
    """A channel-layer message: a build changed status."""

    type: str  # "build.status"
    build_id: int
    status: str


BuilderFactory = Callable[[ToolRegistry], Any]


def build_policy() -> Any:
    """Return the builder's walls from the deployment settings (base images, pulls, indexes)."""
    from jazzmine.sandbox.builder import BuildPolicy
    from jazzmine.sandbox.wheels import PipIndexes

    return BuildPolicy(
        base_images=tuple(base_images_allowed()),
        allow_pull=bool(settings.JAZZMINE_BASE_IMAGE_PULL),
        indexes=PipIndexes(
            index_url=settings.JAZZMINE_PIP_INDEX_URL,
            extra_index_urls=tuple(settings.JAZZMINE_PIP_EXTRA_INDEX_URLS),
        ),
    )


def _default_builder(registry: ToolRegistry) -> Any:
    # Imported here: the docker SDK is only needed by the worker that builds.
    from jazzmine.sandbox.builder import SandboxBuilder

    return SandboxBuilder(registry, policy=build_policy())


def image_build_start(
    *,
    sandbox: Sandbox,
    user: AbstractBaseUser | None,
    background: bool = True,
) -> ImageBuild:
    """Queue a build of a sandbox's image for a worker; reuse one in progress, never a stale one."""
    running = sandbox.builds.filter(status__in=[BuildStatus.QUEUED, BuildStatus.BUILDING]).first()
    if running is not None and not image_build_fail_if_stale(build=running):
        return running
    registry = registry_for_sandbox(sandbox)
    build = ImageBuild.objects.create(
        sandbox=sandbox,
        checksum=registry.sandbox_checksum(sandbox.name),
        tool_checksums={t.name: t.checksum for t in registry.tools(sandbox.name)},
        requested_by=user,
    )
    if background:
        # After commit: the worker's own connection must see the row. By name: the task
        # module is the worker's side.
        build_id = build.pk
        transaction.on_commit(lambda: celery_app.send_task("catalog.image_build", args=[build_id]))
    return build


def image_build_claim(*, build_id: int, worker: str) -> bool:
    """Make a queued build this worker's; False when another worker (or the reaper) got it."""
    rows = ImageBuild.objects.filter(pk=build_id, status=BuildStatus.QUEUED)
    return row_claim(rows, worker=worker, status=BuildStatus.BUILDING)


def image_build_fail_if_stale(*, build: ImageBuild) -> bool:
    """End a build whose worker went silent, or that no worker took; tell whether it was."""
    now = timezone.now()
    if build.status == BuildStatus.BUILDING:
        beat = build.heartbeat_at or build.created_at
        if beat >= heartbeat_cutoff(now):
            return False
        why = f"the worker building it ({build.worker or 'unknown'}) stopped answering"
        rows = ImageBuild.objects.filter(
            pk=build.pk, status=BuildStatus.BUILDING, heartbeat_at=build.heartbeat_at
        )
    elif build.status == BuildStatus.QUEUED:
        if build.created_at >= never_started_cutoff(now):
            return False
        why = "no worker took it (is a worker running?)"
        rows = ImageBuild.objects.filter(pk=build.pk, status=BuildStatus.QUEUED)
    else:
        return False
    if not rows.update(status=BuildStatus.FAILED, error=why, finished_at=now):
        return False  # it moved meanwhile: its worker is alive after all
    image_build_append_line(build_id=build.pk, line=f"ERROR: {why}; the build was abandoned")
    image_build_set_status(build_id=build.pk, status=BuildStatus.FAILED, error=why)
    return True


def image_builds_reap() -> int:
    """End every build whose worker went silent or that nobody took; return how many."""
    stale = ImageBuild.objects.filter(status__in=[BuildStatus.QUEUED, BuildStatus.BUILDING])
    return sum(image_build_fail_if_stale(build=build) for build in stale)


def image_build_append_line(*, build_id: int, line: str) -> int:
    """Append a line to a build's log, store it, and stream it; return its sequence number."""
    line = line.rstrip("\n")
    with transaction.atomic():
        ImageBuild.objects.filter(pk=build_id).update(
            log=Concat(F("log"), Value(line + "\n")), line_count=F("line_count") + 1
        )
        seq = ImageBuild.objects.filter(pk=build_id).values_list("line_count", flat=True).get()
    # Stored first, then sent: a consumer that reads the log after joining the group misses
    # nothing and can drop the duplicates by sequence number.
    event: BuildLineEvent = {"type": "build.line", "build_id": build_id, "seq": seq, "line": line}
    live.group_send(live.build_group(build_id), dict(event))
    return seq


def image_build_set_status(*, build_id: int, status: str, **fields: Any) -> None:
    """Change a build's status and tell its watchers."""
    if status in (BuildStatus.SUCCEEDED, BuildStatus.FAILED):
        fields["finished_at"] = timezone.now()
    ImageBuild.objects.filter(pk=build_id).update(status=status, **fields)
    event: BuildStatusEvent = {"type": "build.status", "build_id": build_id, "status": status}
    live.group_send(live.build_group(build_id), dict(event))


def image_build_run(*, build_id: int, builder_factory: BuilderFactory | None = None) -> ImageBuild:
    """Run a queued build now, in this thread, streaming its log; never raises on failure."""
    build = ImageBuild.objects.select_related("sandbox").get(pk=build_id)
    image_build_set_status(build_id=build_id, status=BuildStatus.BUILDING)
    try:
        registry = registry_for_sandbox(build.sandbox)
        builder = (builder_factory or _default_builder)(registry)
        result = builder.ensure_image(
            build.sandbox.name,
            on_log=lambda line: image_build_append_line(build_id=build_id, line=line),
        )
    except Exception as exc:
        logger.warning("image build %s failed: %s", build_id, exc)
        image_build_append_line(build_id=build_id, line=f"ERROR: {exc}")
        image_build_set_status(build_id=build_id, status=BuildStatus.FAILED, error=str(exc))
    else:
        image_build_append_line(
            build_id=build_id, line=f"image {result.tag} ready ({result.seconds:.1f} s)"
        )
        image_build_set_status(
            build_id=build_id, status=BuildStatus.SUCCEEDED, tag=result.tag, built=result.built
        )
    build.refresh_from_db()
    return build


# Import


@dataclass
class ImportReport:
    """What an import did, tool by tool."""

    created: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # code, needs or prompt: a new version
    updated: list[str] = field(default_factory=list)  # stored, but no version (nothing it reads)
    unchanged: list[str] = field(default_factory=list)
    sandboxes_created: list[str] = field(default_factory=list)
    sandboxes_updated: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def changed_anything(self) -> bool:
        """Tell whether the import wrote anything."""
        return bool(
            self.created
            or self.changed
            or self.updated
            or self.sandboxes_created
            or self.sandboxes_updated
        )

    def summary(self) -> str:
        """Return one line saying what happened."""
        parts = []
        for label, names in (
            ("created", self.created),
            ("changed (new version)", self.changed),
            ("updated", self.updated),
            ("unchanged", self.unchanged),
        ):
            if names:
                parts.append(f"{label}: {', '.join(names)}")
        for label, names in (
            ("sandboxes created", self.sandboxes_created),
            ("sandboxes updated", self.sandboxes_updated),
        ):
            if names:
                parts.append(f"{label}: {', '.join(names)}")
        return "; ".join(parts) or "nothing to import"


def tools_import(
    *,
    team: Team,
    files: Sequence[Any],
    author: AbstractBaseUser | None,
    sandbox_name: str | None = None,
    actor: AbstractBaseUser | None = None,
) -> ImportReport:
    """Import `@tool` functions from source files by parsing them; all or nothing.

    `files` are `importer.SourceFile`s. With `sandbox_name`, every tool goes into that sandbox;
    without it, each goes where its decorator's `sandbox=` says ("default" when unsaid).
    Raises `importer.ImportRefused` listing every problem; then nothing is written.
    """
    from .importer import ImportProblem, ImportRefused, parse_files

    parsed = parse_files(files, target_sandbox=sandbox_name)
    report = ImportReport(notes=list(parsed.notes))
    problems: list[ImportProblem] = []
    with transaction.atomic():
        sandboxes: dict[str, Sandbox] = {}
        for name in parsed.sandbox_names():
            config = parsed.configs.get(name)
            existing = Sandbox.objects.filter(team=team, name=name).first()
            try:
                if existing is None:
                    values = config.values if config else {}
                    sandboxes[name] = sandbox_create(team=team, name=name, actor=actor, **values)
                    report.sandboxes_created.append(name)
                else:
                    if config and sandbox_update(sandbox=existing, actor=actor, **config.values):
                        report.sandboxes_updated.append(name)
                    sandboxes[name] = existing
            except (ValidationError, PermissionDenied) as exc:
                where = config.where if config else parsed.first_tool_where(name)
                problems.append(ImportProblem(where[0], where[1], _messages(exc)))
        for item in parsed.tools:
            sandbox = sandboxes.get(item.sandbox)
            if sandbox is None:
                continue
            fields = {
                "description": item.description,
                "parameters": item.parameters,
                "dependencies": item.dependencies,
                "secrets": item.secrets,
                "source": item.source,
            }
            try:
                existing = Tool.objects.filter(sandbox=sandbox, name=item.name).first()
                if existing is None:
                    tool_create(
                        sandbox=sandbox,
                        name=item.name,
                        author=author,
                        note=f"Imported from {item.filename}",
                        actor=actor,
                        **fields,
                    )
                    report.created.append(item.name)
                    continue
                change = tool_update(
                    tool=existing,
                    author=author,
                    note=f"Imported from {item.filename}",
                    actor=actor,
                    **fields,
                )
            except (ValidationError, PermissionDenied) as exc:
                problems.append(ImportProblem(item.filename, item.line, _messages(exc)))
                continue
            if change.new_version is not None:
                report.changed.append(item.name)
            elif change.changed:
                report.updated.append(item.name)
            else:
                report.unchanged.append(item.name)
        if problems:
            transaction.set_rollback(True)
    if problems:
        raise ImportRefused(problems)
    return report


def _messages(exc: ValidationError | PermissionDenied) -> str:
    """Return an error's messages as one line."""
    if isinstance(exc, ValidationError):
        return "; ".join(exc.messages)
    return str(exc)
