"""Reads of the catalog: what a user may see, search, statuses, diffs and the export."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet

from jazzmine.core.tools import ToolRegistry

from ..teams.models import Role
from ..teams.selectors import team_ids_with_role
from .crypto import decrypt
from .models import BuildStatus, ImageBuild, Sandbox, SecretValue, Tool, ToolVersion
from .services import registry_for_sandbox

AnyUser = AbstractBaseUser | AnonymousUser


def sandboxes_for_user(user: AnyUser, *, role: str = Role.MEMBER) -> QuerySet[Sandbox]:
    """Return the sandboxes of the teams where a user has at least `role`."""
    return Sandbox.objects.filter(
        team_id__in=team_ids_with_role(user=user, role=role)
    ).select_related("team")


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
    latest = sandbox.builds.order_by("-created_at", "-pk").first()
    if latest is not None and latest.is_running:
        return ImageStatus(ImageStatus.BUILDING, checksum, latest)
    current = sandbox.builds.filter(checksum=checksum).order_by("-created_at", "-pk").first()
    if current is None:
        return ImageStatus(ImageStatus.NEEDS_REBUILD, checksum, latest)
    if current.status == BuildStatus.SUCCEEDED:
        return ImageStatus(ImageStatus.UP_TO_DATE, checksum, current)
    return ImageStatus(ImageStatus.FAILED, checksum, current)


@dataclass(frozen=True)
class SecretStatus:
    """A secret a sandbox needs: whether it has a value, who set it and when (never the value)."""

    name: str
    is_set: bool
    set_by: str | None
    set_at: datetime | None


def sandbox_secret_statuses(
    sandbox: Sandbox, *, registry: ToolRegistry | None = None
) -> list[SecretStatus]:
    """Return every secret the sandbox and its tools need, with set / not set."""
    registry = registry or registry_for_sandbox(sandbox)
    values = {
        s.name: s for s in SecretValue.objects.filter(sandbox=sandbox).select_related("set_by")
    }
    statuses = []
    for name in registry.aggregate_secrets(sandbox.name):
        value = values.get(name)
        statuses.append(
            SecretStatus(
                name=name,
                is_set=value is not None,
                set_by=value.set_by.get_username() if value and value.set_by else None,
                set_at=value.set_at if value else None,
            )
        )
    return statuses


def sandbox_secret_values(sandbox: Sandbox, *, names: list[str] | None = None) -> dict[str, str]:
    """Return decrypted secret values for a run's environment (only those that are set)."""
    rows = SecretValue.objects.filter(sandbox=sandbox)
    if names is not None:
        rows = rows.filter(name__in=names)
    return {row.name: decrypt(row.ciphertext) for row in rows}


def tool_versions(tool: Tool) -> QuerySet[ToolVersion]:
    """Return a tool's versions, newest first."""
    return tool.versions.select_related("author").order_by("-number")


def tool_version_diff(version: ToolVersion, *, against: ToolVersion | None = None) -> str:
    """Return a unified diff of a version against the one before it (or `against`)."""
    if against is None:
        against = (
            ToolVersion.objects.filter(tool_id=version.tool_id, number__lt=version.number)
            .order_by("-number")
            .first()
        )
    old_name = f"v{against.number}" if against else "(none)"
    lines = list(
        difflib.unified_diff(
            _diffable(against),
            _diffable(version),
            fromfile=old_name,
            tofile=f"v{version.number}",
        )
    )
    return "".join(lines)


def _diffable(version: ToolVersion | None) -> list[str]:
    """Return a version as diff lines: what review depends on first, then the code."""
    if version is None:
        return []
    head = [f"# dependencies: {json.dumps(sorted(version.dependencies))}\n"]
    # Versions recorded before these were kept say nothing about them.
    if version.secrets is not None:
        head.append(f"# secrets: {json.dumps(sorted(version.secrets))}\n")
    if version.always_allow is not None:
        head.append(f"# always_allow: {json.dumps(version.always_allow)}\n")
    return [*head, *version.source.splitlines(keepends=True)]


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
    from .exporter import render_module

    return render_module(sandbox, list(sandbox.tools.order_by("name")))


def tools_prompt_payload(sandbox: Sandbox) -> dict[str, Any]:
    """Return the sandbox's tools XML prompt and checksum, as the API sends them."""
    registry = registry_for_sandbox(sandbox)
    return {
        "sandbox": sandbox.name,
        "checksum": registry.sandbox_checksum(sandbox.name),
        "prompt": registry.build_tools_prompt(sandbox.name),
    }
