"""Reads for the home page."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from jazzmine.core.tools import RegisteredTool, ToolRegistry

from ..catalog.selectors import sandboxes_for_user
from ..catalog.services.registry import registry_for_sandbox


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


def sandbox_summaries(reg: ToolRegistry) -> list[SandboxSummary]:
    """Return every sandbox of a registry with its tools and prompt."""
    return [
        SandboxSummary(
            name=config.name,
            checksum=reg.sandbox_checksum(config.name),
            dependencies=reg.aggregate_dependencies(config.name),
            secrets=reg.aggregate_secrets(config.name),
            tools=reg.tools(config.name),
            tools_prompt=reg.build_tools_prompt(config.name),
        )
        for config in reg.sandboxes()
    ]


def team_sandbox_summaries(user: AbstractBaseUser | AnonymousUser) -> list[SandboxSummary]:
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
