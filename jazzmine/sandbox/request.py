"""What a run needs from the host: the request sent to the harness and the limits it runs under."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# Open files each process of a sandbox may hold (RLIMIT_NOFILE), on both backends. The host's
# file table (fs.file-max) is one for every process of the machine, the database's included,
# and kernel memory accounting lets a sandbox of 128 MiB hold some 400 000 open files with the
# engine's default limit (20 000 a process): a few runs would leave the host none (ENFILE).
MAX_OPEN_FILES = 256


@dataclass(frozen=True)
class RunLimits:
    """Resource walls of one run; taken from a SandboxConfig with `from_sandbox`."""

    network: bool = False
    memory_mb: int = 256
    cpus: float = 1.0
    pids_limit: int = 128
    timeout_seconds: float = 30.0
    max_output_bytes: int = 1_000_000
    tmpfs_mb: int = 64
    # Events a run may send: each is parsed, stored as a row and sent to its watchers, so a
    # loop of empty logs (half a million under a 50 MB output cap) cost the host far more
    # than its bytes say.
    max_events: int = 100_000

    @classmethod
    def from_sandbox(cls, config: Any, **overrides: Any) -> RunLimits:
        """Read the limits of a SandboxConfig (anything with the same attribute names)."""
        values = {
            name: getattr(config, name)
            for name in ("network", "memory_mb", "cpus", "pids_limit", "timeout_seconds")
            if hasattr(config, name)
        }
        if hasattr(config, "max_output_bytes"):
            values["max_output_bytes"] = config.max_output_bytes
        values.update(overrides)
        return cls(**values)


@dataclass(frozen=True)
class RunRequest:
    """One script to run: the assembled text, where its body starts, and the secrets it may see."""

    script: str
    body_offset: int = 0
    secrets: Mapping[str, str] = field(default_factory=dict)
    # The tools this run may call, as the decision that let it run says (None: every tool).
    # The harness refuses any other tool call where the code runs.
    allowed_tools: frozenset[str] | None = None
    # {tool: secret names} set in the environment only while that tool runs; every other
    # secret is the whole sandbox's (`ToolRegistry.tool_only_secrets`).
    tool_secrets: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # {tool: the parameter names its prompt documents}: all a script may pass it, enforced
    # where the code runs (`ToolRegistry.tool_parameter_names`; None: unchecked).
    tool_parameters: Mapping[str, frozenset[str]] | None = None
    # Test-only: run with full builtins to prove the container walls hold. Runners refuse it
    # unless created with allow_unrestricted=True, which the web app never does.
    unrestricted: bool = False

    @classmethod
    def for_sandbox(
        cls,
        script: str,
        *,
        declared_secrets: Iterable[str],
        secret_store: Mapping[str, str],
        body_offset: int = 0,
        allowed_tools: Iterable[str] | None = None,
        tool_secrets: Mapping[str, Iterable[str]] | None = None,
        tool_parameters: Mapping[str, Iterable[str]] | None = None,
    ) -> RunRequest:
        """Build a request carrying only the declared secrets that the store holds."""
        allowed = {name: secret_store[name] for name in declared_secrets if name in secret_store}
        tools = None if allowed_tools is None else frozenset(allowed_tools)
        return cls(
            script=script,
            body_offset=body_offset,
            secrets=allowed,
            allowed_tools=tools,
            tool_secrets=names_by_tool(tool_secrets or {}),
            tool_parameters=None if tool_parameters is None else names_by_tool(tool_parameters),
        )

    def own_secrets(self) -> dict[str, dict[str, str]]:
        """Return {tool: {name: value}} for each tool with secrets of its own and their values.

        The harness hands these to that tool's own process alone, never to the script's.
        """
        own = {
            tool: {name: self.secrets[name] for name in sorted(names) if name in self.secrets}
            for tool, names in self.tool_secrets.items()
        }
        return {tool: values for tool, values in sorted(own.items()) if values}

    def payload(self, timeout_seconds: float) -> dict[str, Any]:
        """Return the request the harness's worker reads: no tool's own secret is in it."""
        scoped = set().union(*self.tool_secrets.values()) if self.tool_secrets else set()
        return {
            "script": self.script,
            "body_offset": self.body_offset,
            "secrets": {n: v for n, v in self.secrets.items() if n not in scoped},
            "allowed_tools": None if self.allowed_tools is None else sorted(self.allowed_tools),
            "tool_secrets": _sorted(self.tool_secrets),
            "isolated_tools": sorted(self.own_secrets()),
            "tool_parameters": None
            if self.tool_parameters is None
            else _sorted(self.tool_parameters),
            "timeout": timeout_seconds,
            "unrestricted": self.unrestricted,
        }

    def to_line(self, timeout_seconds: float) -> bytes:
        """Serialize as what the harness reads from stdin: two lines.

        First the worker's request; then the tools' own secrets, which the relay keeps from
        the worker (the script's process) and hands to each tool's own process.
        """
        request = json.dumps(self.payload(timeout_seconds), ensure_ascii=True)
        own = json.dumps({"tool_secrets": self.own_secrets()}, ensure_ascii=True)
        return (request + "\n" + own + "\n").encode("ascii")


def names_by_tool(names: Mapping[str, Iterable[str]]) -> Mapping[str, frozenset[str]]:
    """Return {tool: names} with each tool's names as a frozenset, from any iterables."""
    return {tool: frozenset(given) for tool, given in names.items()}


def _sorted(names: Mapping[str, frozenset[str]]) -> dict[str, list[str]]:
    return {tool: sorted(given) for tool, given in names.items()}
