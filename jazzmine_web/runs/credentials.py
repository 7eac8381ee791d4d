"""Credentials other apps hand a run as environment, and take back when it ends.

The script tools' keychain issues one token per tool for a run; the apps that do so sit above
runs and register here in their `ready()`, so runs names none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .models import Run


@dataclass(frozen=True)
class Credentials:
    """One app's credentials: `issue(run=, lifetime=, tool_allowed=)` gives env, `revoke(run_id=)`
    ends it."""

    issue: Callable[..., dict[str, str]]
    revoke: Callable[..., Any]
    # tool_of(variable) names the one tool a variable is for (None: the whole sandbox's);
    # the harness sets such a variable only while that tool runs.
    tool_of: Callable[[str], str | None] | None = None


# {name: credentials}: registering a name again replaces it, so a second `ready()` adds nothing.
CREDENTIALS: dict[str, Credentials] = {}


def run_credentials_register(
    name: str,
    *,
    issue: Callable[..., dict[str, str]],
    revoke: Callable[..., Any],
    tool_of: Callable[[str], str | None] | None = None,
) -> None:
    """Say how an app issues a run's credentials, which tool each is for, and how it revokes
    them once the run has ended."""
    CREDENTIALS[name] = Credentials(issue=issue, revoke=revoke, tool_of=tool_of)


def run_credentials_issue(
    *, run: Run, lifetime: float, tool_allowed: Callable[[str], bool]
) -> dict[str, str]:
    """Return the environment every registered app gives a run that lives `lifetime` seconds.

    Nothing is issued for a tool `tool_allowed` refuses (its code, or a wheel it loads, waits
    for an admin): a credential made and then left out would stay valid until the run ends.
    """
    environment: dict[str, str] = {}
    for credentials in CREDENTIALS.values():
        environment.update(credentials.issue(run=run, lifetime=lifetime, tool_allowed=tool_allowed))
    return environment


def run_credentials_tools(environment: dict[str, str]) -> dict[str, set[str]]:
    """Return {tool: variables} for the issued variables that are one tool's alone."""
    scoped: dict[str, set[str]] = {}
    for credentials in CREDENTIALS.values():
        if credentials.tool_of is None:
            continue
        for variable in environment:
            tool = credentials.tool_of(variable)
            if tool:
                scoped.setdefault(tool, set()).add(variable)
    return scoped


def run_credentials_revoke(*, run_id: Any) -> None:
    """Take back what was issued to a run that has ended."""
    for credentials in CREDENTIALS.values():
        credentials.revoke(run_id=run_id)
