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
    """One app's credentials: `issue(run=, lifetime=)` gives env, `revoke(run_id=)` ends it."""

    issue: Callable[..., dict[str, str]]
    revoke: Callable[..., Any]


# {name: credentials}: registering a name again replaces it, so a second `ready()` adds nothing.
CREDENTIALS: dict[str, Credentials] = {}


def run_credentials_register(
    name: str, *, issue: Callable[..., dict[str, str]], revoke: Callable[..., Any]
) -> None:
    """Say how an app issues a run's credentials and revokes them once the run has ended."""
    CREDENTIALS[name] = Credentials(issue=issue, revoke=revoke)


def run_credentials_issue(*, run: Run, lifetime: float) -> dict[str, str]:
    """Return the environment every registered app gives a run that lives `lifetime` seconds."""
    environment: dict[str, str] = {}
    for credentials in CREDENTIALS.values():
        environment.update(credentials.issue(run=run, lifetime=lifetime))
    return environment


def run_credentials_revoke(*, run_id: Any) -> None:
    """Take back what was issued to a run that has ended."""
    for credentials in CREDENTIALS.values():
        credentials.revoke(run_id=run_id)
