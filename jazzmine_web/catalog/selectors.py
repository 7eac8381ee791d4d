"""Reads of the catalog: what a user may see, search, statuses, diffs, the export, the home page."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet

from jazzmine.bash.commands import lines_naming
from jazzmine.core.tools import RegisteredTool, ToolRegistry
from jazzmine.core.tools.lint import LintItem, lint_python_tool
from jazzmine.gate import Doubt, Reading, read_calls
from jazzmine.sandbox.builder import image_tag_digest

from ..studio.diffs import unified_diff
from ..studio.untrusted import id_number
from ..teams.models import TEAM, Role
from ..teams.selectors import team_ids_with_role
from .crypto import decrypt
from .exporter import render_module
from .models import (
    SANDBOX,
    SANDBOX_SECRETS,
    BuildStatus,
    ImageBuild,
    Sandbox,
    SecretValue,
    Tool,
    ToolVersion,
)
from .reading import lint_read
from .services.registry import registry_for_sandbox

AnyUser = AbstractBaseUser | AnonymousUser


def sandboxes_for_user(user: AnyUser, *, role: str = Role.MEMBER) -> QuerySet[Sandbox]:
    """Return the sandboxes of the teams where a user has at least `role`."""
    return Sandbox.objects.filter(
        team_id__in=team_ids_with_role(user=user, role=role)
    ).select_related("team")


def sandbox_for_user(user: AnyUser, sandbox_id: Any, *, role: str = Role.MEMBER) -> Sandbox | None:
    """Return one sandbox (its team read with it) if the user has `role` in its team, else None.

    The rule of `sandboxes_for_user`, by fixed-shape reads (`studio.hotrows`): it is asked on
    every run's way in and every run a page follows, where compiling the queryset cost ten
    times reading its rows. Anything that is no id a column holds names no sandbox.
    """
    number = id_number(sandbox_id)
    sandbox = SANDBOX.get(number) if number is not None else None
    if sandbox is None or sandbox.team_id not in team_ids_with_role(user=user, role=role):
        return None
    team = TEAM.get(sandbox.team_id)
    if team is None:
        return None  # deleted with its sandboxes between these reads
    sandbox.team = team
    return sandbox


def tools_for_user(user: AnyUser, *, role: str = Role.MEMBER) -> QuerySet[Tool]:
    """Return the tools in the sandboxes a user may see."""
    return Tool.objects.filter(
        sandbox__team_id__in=team_ids_with_role(user=user, role=role)
    ).select_related("sandbox", "sandbox__team")


def builds_for_user(user: AnyUser) -> QuerySet[ImageBuild]:
    """Return the image builds of the sandboxes a user may see."""
    return ImageBuild.objects.filter(
        sandbox__team_id__in=team_ids_with_role(user=user)
    ).select_related("sandbox", "sandbox__team")


def tool_search(
    *, user: AnyUser, text: str = "", sandbox_id: int | None = None, tag: str = ""
) -> QuerySet[Tool]:
    """Return the user's tools matching a text (name or description), a sandbox and a tag."""
    tools = tools_for_user(user).defer("source", "parameters")
    if text.strip():
        for word in text.split():
            tools = tools.filter(Q(name__icontains=word) | Q(description__icontains=word))
    if sandbox_id is not None:
        tools = tools.filter(sandbox_id=sandbox_id)
    if tag.strip():
        tools = tools.filter(tags_index__contains=f",{tag.strip().lower()},")
    return tools.order_by("sandbox__name", "name")


def tags_for_user(user: AnyUser) -> list[str]:
    """Return every tag used on the user's tools, sorted."""
    tags: set[str] = set()
    for row in tools_for_user(user).exclude(tags_index="").values_list("tags", flat=True):
        tags.update(row)
    return sorted(tags)


@dataclass(frozen=True)
class ImageStatus:
    """Where a sandbox's image stands against its current checksum."""

    UP_TO_DATE = "up_to_date"
    NEEDS_REBUILD = "needs_rebuild"
    BUILDING = "building"
    FAILED = "failed"

    code: str
    checksum: str
    build: ImageBuild | None  # the build this status is about (latest for the checksum)

    @property
    def label(self) -> str:
        """Return the status as people read it."""
        return {
            self.UP_TO_DATE: "up to date",
            self.NEEDS_REBUILD: "needs rebuild",
            self.BUILDING: "building",
            self.FAILED: "failed",
        }[self.code]


def sandbox_image_status(sandbox: Sandbox, *, registry: ToolRegistry | None = None) -> ImageStatus:
    """Return the image status of a sandbox: up to date, needs rebuild, building or failed."""
    registry = registry or registry_for_sandbox(sandbox)
    checksum = registry.sandbox_checksum(sandbox.name)
    # The status of the code as it is now: a build of earlier content still running builds
    # no image of it, so the page offers Build rather than say "building".
    current = _build_of_content(sandbox, registry.sandbox_digest(sandbox.name))
    if current is not None and current.is_running:
        return ImageStatus(ImageStatus.BUILDING, checksum, current)
    if current is None:
        latest = sandbox.builds.order_by("-created_at", "-pk").first()
        return ImageStatus(ImageStatus.NEEDS_REBUILD, checksum, latest)
    if current.status == BuildStatus.SUCCEEDED:
        return ImageStatus(ImageStatus.UP_TO_DATE, checksum, current)
    return ImageStatus(ImageStatus.FAILED, checksum, current)


def _build_of_content(sandbox: Sandbox, digest: str) -> ImageBuild | None:
    """Return the newest build of the sandbox content of this whole digest, or None.

    By the digest, not the checksum: other content may share the 16 hex chars. A build
    recorded before builds carried their digest (catalog migration 0010) is read by its
    image's tag, which names the whole digest its builder built: without it every sandbox
    built before would read "needs rebuild" until built again. Here only: this says whether
    to press Build, while Accept binds wheels from builds that recorded their digest alone.
    """
    builds = sandbox.builds.order_by("-created_at", "-pk")
    build = builds.filter(digest=digest).first()
    if build is not None:
        return build
    older = builds.filter(digest="", status=BuildStatus.SUCCEEDED, tag__contains=digest)
    return next((b for b in older if image_tag_digest(b.tag) == digest), None)


@dataclass(frozen=True)
class SecretStatus:
    """A secret a sandbox needs: whether it has a value, who set it and when (never the value)."""

    name: str
    is_set: bool
    set_by: str | None
    set_at: datetime | None
    # The tools whose calls it is set for; empty: every tool's (the sandbox declares it).
    tools: tuple[str, ...] = ()
    # False: a value stored for a name nothing declares any more. It reaches no run, but the
    # next tool that declares the name gets it: listed, so that an admin can clear it.
    declared: bool = True


def sandbox_secret_statuses(
    sandbox: Sandbox, *, registry: ToolRegistry | None = None
) -> list[SecretStatus]:
    """Return every secret the sandbox and its tools need, with set / not set."""
    registry = registry or registry_for_sandbox(sandbox)
    values = {
        s.name: s for s in SecretValue.objects.filter(sandbox=sandbox).select_related("set_by")
    }
    owners: dict[str, list[str]] = {}
    for tool, names in sorted(registry.tool_only_secrets(sandbox.name).items()):
        for name in names:
            owners.setdefault(name, []).append(tool)
    declared = registry.aggregate_secrets(sandbox.name)
    statuses = []
    for name in [*declared, *sorted(set(values) - set(declared))]:
        value = values.get(name)
        statuses.append(
            SecretStatus(
                name=name,
                is_set=value is not None,
                set_by=value.set_by.get_username() if value and value.set_by else None,
                set_at=value.set_at if value else None,
                tools=tuple(owners.get(name, ())),
                declared=name in declared,
            )
        )
    return statuses


def sandbox_secret_values(sandbox: Sandbox, *, names: list[str] | None = None) -> dict[str, str]:
    """Return decrypted secret values for a run's environment (only those that are set)."""
    wanted = None if names is None else set(names)
    return {
        row.name: decrypt(row.ciphertext)
        for row in SANDBOX_SECRETS.all(sandbox.pk)
        if wanted is None or row.name in wanted
    }


def tool_versions(tool: Tool) -> QuerySet[ToolVersion]:
    """Return a tool's versions, newest first."""
    return tool.versions.select_related("author").order_by("-number")


@dataclass(frozen=True)
class VersionDiff:
    """What a version changed against another: the XML the LLM reads, and the code with its needs.

    `prompt` is None when either version was recorded before prompts were versioned: unknown,
    which is not the same as unchanged.
    """

    version: ToolVersion
    against: ToolVersion | None
    prompt: str | None
    code: str

    @property
    def prompt_unknown_in(self) -> list[ToolVersion]:
        """Return the versions of the two that have no record of their prompt."""
        both = [v for v in (self.against, self.version) if v is not None]
        return [v for v in both if v.prompt is None]


def _previous_version(version: ToolVersion) -> ToolVersion | None:
    return (
        ToolVersion.objects.filter(tool_id=version.tool_id, number__lt=version.number)
        .order_by("-number")
        .first()
    )


def tool_version_diff(version: ToolVersion, *, against: ToolVersion | None = None) -> VersionDiff:
    """Return the diff of a version against the one before it (or `against`)."""
    if against is None:
        against = _previous_version(version)
    old_name = f"v{against.number}" if against else "(none)"
    new_name = f"v{version.number}"
    prompt = None
    if version.prompt is not None and (against is None or against.prompt is not None):
        old_prompt = against.prompt if against is not None else ""
        prompt = unified_diff(
            old_prompt or "", version.prompt, old_name=old_name, new_name=new_name
        )
    code = unified_diff(
        _code_text(against), _code_text(version), old_name=old_name, new_name=new_name
    )
    return VersionDiff(version=version, against=against, prompt=prompt, code=code)


def _code_text(version: ToolVersion | None) -> str:
    """Return a version's code as diff text: what review depends on first, then the source."""
    if version is None:
        return ""
    head = [f"# dependencies: {json.dumps(sorted(version.dependencies))}\n"]
    # Versions recorded before these were kept say nothing about them.
    if version.secrets is not None:
        head.append(f"# secrets: {json.dumps(sorted(version.secrets))}\n")
    if version.always_allow is not None:
        head.append(f"# always_allow: {json.dumps(version.always_allow)}\n")
    return "".join(head) + version.source


@dataclass(frozen=True)
class VersionRow:
    """A line of a tool's history: the version and what it changed against the one before."""

    version: ToolVersion
    changes: list[str]  # "prompt", "code", "dependencies", "secrets", "always_allow"
    # Whether it changed the prompt cannot be told: it or the one before was recorded before
    # prompts were versioned.
    prompt_unknown: bool
    first: bool


def tool_version_history(tool: Tool) -> list[VersionRow]:
    """Return a tool's versions, newest first, each with what it changed."""
    versions = list(tool_versions(tool))
    rows = []
    for index, version in enumerate(versions):
        before = versions[index + 1] if index + 1 < len(versions) else None
        rows.append(
            VersionRow(
                version=version,
                changes=_version_changes(before, version),
                prompt_unknown=before is not None
                and (before.prompt is None or version.prompt is None),
                first=before is None,
            )
        )
    return rows


def _version_changes(before: ToolVersion | None, version: ToolVersion) -> list[str]:
    if before is None:
        return []
    changes = []
    if before.prompt is not None and version.prompt is not None and before.prompt != version.prompt:
        changes.append("prompt")
    if before.source != version.source:
        changes.append("code")
    if sorted(before.dependencies) != sorted(version.dependencies):
        changes.append("dependencies")
    for key in ("secrets", "always_allow"):
        old, new = getattr(before, key), getattr(version, key)
        if old is not None and new is not None and old != new:
            changes.append(key)
    return changes


def python_tool_lint(tool: Tool) -> list[LintItem]:
    """Return the lint of a Python tool: its documented defaults against its signature's."""
    if tool.is_script:
        return []
    try:
        return lint_read(len(tool.source), lint_python_tool, tool.source, list(tool.parameters))
    except (TypeError, ValueError):
        # A row the core would refuse today (an old one) gets no lint rather than no page.
        return []


def tool_is_always_allowed(tool: Tool) -> bool:
    """Tell whether the review gate may let a script call this tool without a person.

    True only when the tool asks for it and a team admin accepted its current code and
    dependencies; read this, never `Tool.always_allow` (the request).
    """
    return tool.is_always_allowed


def tool_image_sandboxes(tool: Tool) -> list[Sandbox]:
    """Return the team's sandboxes whose current image holds this tool's code as it is now."""
    sandboxes = []
    for sandbox in Sandbox.objects.filter(team_id=tool.sandbox.team_id).order_by("name"):
        latest_ok = (
            sandbox.builds.filter(status=BuildStatus.SUCCEEDED)
            .order_by("-created_at", "-pk")
            .first()
        )
        if latest_ok and tool.checksum in latest_ok.tool_checksums.values():
            sandboxes.append(sandbox)
    return sandboxes


def sandbox_export_module(sandbox: Sandbox) -> str:
    """Return a `.py` module that registers the sandbox and its tools with the core."""
    return render_module(sandbox, list(sandbox.tools.order_by("name")))


def tools_prompt_payload(sandbox: Sandbox) -> dict[str, Any]:
    """Return the sandbox's tools XML prompt and checksum, as the API sends them."""
    registry = registry_for_sandbox(sandbox)
    return {
        "sandbox": sandbox.name,
        "checksum": registry.sandbox_checksum(sandbox.name),
        "prompt": registry.build_tools_prompt(sandbox.name),
    }


@dataclass(frozen=True)
class SandboxSummary:
    """What the home page shows of one sandbox."""

    name: str
    checksum: str
    dependencies: list[str]
    secrets: list[str]
    tools: list[RegisteredTool]
    tools_prompt: str
    pk: int | None = None
    team: str = ""
    tool_ids: dict[str, int] | None = None


def demo_registry() -> ToolRegistry:
    """Return the registry holding the demo tools (our own trusted module, imported once)."""
    return importlib.import_module("demo.ecommerce").registry


def team_sandbox_summaries(user: AnyUser) -> list[SandboxSummary]:
    """Return the sandboxes of the user's teams, each built through the catalog's registry."""
    summaries = []
    for sandbox in sandboxes_for_user(user).prefetch_related("tools"):
        rows = list(sandbox.tools.all())
        reg = registry_for_sandbox(sandbox, tools=rows)
        summaries.append(
            SandboxSummary(
                name=sandbox.name,
                checksum=reg.sandbox_checksum(sandbox.name),
                dependencies=reg.aggregate_dependencies(sandbox.name),
                secrets=reg.aggregate_secrets(sandbox.name),
                tools=reg.tools(sandbox.name),
                tools_prompt=reg.build_tools_prompt(sandbox.name),
                pk=sandbox.pk,
                team=sandbox.team.name,
                tool_ids={row.name: row.pk for row in rows},
            )
        )
    return summaries


def tools_called(
    *,
    script: str,
    tools: list[Tool],
    language: str = "python",
    body_offset: int = 0,
    read: Callable[..., Reading] | None = None,
) -> list[dict[str, Any]]:
    """Return every published tool a script calls or may call, with why, for the review policy.

    `script` must be the text that runs (the assembled Python script, or the bash script), so
    the gate and the sandbox read the same thing. Each entry says whether the call is certain
    and why the tool is listed; a tool the reading cannot rule out is listed as a possible call
    (fail closed). Unpublished tools are not in a run's sandbox, so they never count. `read`
    makes the reading as `jazzmine.gate.read_calls` does (elsewhere: a big script is read in
    the checker process).
    """
    rows = {t.name: t for t in tools if t.published}
    reading = (read or read_calls)(script, language=language, tools=sorted(rows))
    entries = []
    for name in sorted(rows):
        if not reading.may_call(name):
            continue
        line = reading.calls.get(name)
        if name in reading.calls and line:
            why = f"called on line {max(1, line - body_offset)}"
        elif name in reading.calls:
            why = _command_lines(script, name)
        else:
            why = "; ".join(_doubt_text(d, body_offset) for d in reading.doubts_about(name))
        row = rows[name]
        entries.append(
            {
                "name": name,
                "kind": row.kind,
                # Asked for and accepted by an admin for the current code, never just asked.
                "always_allow": row.is_always_allowed,
                "secrets": list(row.secrets),
                # The code the reading was made against: an approval covers that code only.
                "code_digest": row.code_digest,
                "certain": name in reading.calls,
                "why": why,
            }
        )
    return entries


# A reviewer is pointed at this many lines of a bash command's calls at most, then told how
# many more there are.
LINES_NAMED = 12


def _command_lines(script: str, name: str) -> str:
    """Say where a bash script calls a tool: every line naming it, so that no call of a tool
    already listed for a first, harmless call goes unread."""
    lines = lines_naming(script, name)
    if not lines:
        return "called as a command"
    named = ", ".join(map(str, lines[:LINES_NAMED]))
    more = f" and {len(lines) - LINES_NAMED} more" if len(lines) > LINES_NAMED else ""
    return f"called as a command on line{'s' if len(lines) > 1 else ''} {named}{more}"


def _doubt_text(doubt: Doubt, body_offset: int) -> str:
    if doubt.line is None:
        return f"may be called: {doubt.reason}"
    return f"may be called: line {max(1, doubt.line - body_offset)}: {doubt.reason}"
