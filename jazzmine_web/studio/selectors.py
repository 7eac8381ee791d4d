"""Reads for the home page."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from jazzmine.core.tools import RegisteredTool, ToolRegistry


@dataclass(frozen=True)
class SandboxSummary:
    """What the home page shows of one sandbox."""

    name: str
    checksum: str
    dependencies: list[str]
    secrets: list[str]
    tools: list[RegisteredTool]
    tools_prompt: str


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
