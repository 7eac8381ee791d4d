"""Writes of a sandbox's secret values (stored encrypted, never shown again), and the gate
that says which of them may reach the code of a run or trial: only code an admin accepted."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from ..crypto import encrypt
from ..models import Sandbox, SecretValue, Tool, ToolKind
from .audit import catalog_change_announce
from .rules import admin_check


def secret_value_set(
    *,
    sandbox: Sandbox,
    name: str,
    value: str,
    user: AbstractBaseUser | None,
    actor: AbstractBaseUser | None = None,
) -> SecretValue:
    """Store (or replace) a secret's value, encrypted; the value is never shown again."""
    admin_check(actor=actor, team=sandbox.team, fields=["secret values"])
    if not value:
        raise ValidationError(f"Give a value for {name!r}, or clear it instead")
    with transaction.atomic():
        had = SecretValue.objects.filter(sandbox=sandbox, name=name).exists()
        secret, _ = SecretValue.objects.update_or_create(
            sandbox=sandbox,
            name=name,
            defaults={"ciphertext": encrypt(value), "set_by": user},
        )
        catalog_change_announce(
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
    admin_check(actor=actor, team=sandbox.team, fields=["secret values"])
    with transaction.atomic():
        deleted, _ = SecretValue.objects.filter(sandbox=sandbox, name=name).delete()
        if deleted:
            catalog_change_announce(
                sandbox=sandbox,
                actor=actor,
                action="secret_cleared",
                target=f"secret {name}",
                changes={"value": ("set", "not set")},
            )
    return deleted > 0


@dataclass(frozen=True)
class SecretsGate:
    """Which secrets may reach the code loaded into one sandbox process (a run or a trial).

    The rule: a secret reaches only code a team admin accepted (`Tool.code_accepted`).
    Python tools share the run's process, so one whose code is not accepted could read any
    variable any other tool is handed, while it runs or from a thread it left: then no
    secret at all reaches that process (`shut`). A script tool runs as a process of its own
    that sees only the secrets it declares, so one whose code is not accepted loses just
    those (`tools`), wherever else they are declared: its runner would pass them on.
    """

    shut: str = ""  # why nothing reaches the process ("" when the Python tools are accepted)
    tools: dict[str, str] = field(default_factory=dict)  # {tool: why its secrets are withheld}

    def tool_allowed(self, name: str) -> bool:
        """Tell whether a tool's own secrets (and keychain token) may reach it."""
        return not self.shut and name not in self.tools

    def withheld(self, declared: Mapping[str, Iterable[str]]) -> dict[str, str]:
        """Return {secret: why} for the secrets withheld, given {tool: secrets it declares}.

        Include the sandbox's own secrets under a key of their own (any name that is no tool's).
        """
        why: dict[str, str] = {}
        for tool, names in declared.items():
            reason = self.shut or self.tools.get(tool, "")
            for name in names:
                if reason:
                    why.setdefault(name, reason)
        return why


def secrets_gate(*, tools: Iterable[Tool]) -> SecretsGate:
    """Return the gate of a process that loads `tools` (a run's published tools, a trial's one)."""
    unaccepted = [t for t in tools if not t.code_accepted]
    python = [t for t in unaccepted if t.kind != ToolKind.SCRIPT]
    shut = ""
    if python:
        # Named one by one: the person reading it knows which code waits for an admin.
        problems = "; ".join(t.code_acceptance_problem for t in python)
        shut = f"{problems} (Python tools share the run's process)"
    return SecretsGate(shut=shut, tools={t.name: t.code_acceptance_problem for t in unaccepted})


def secrets_withheld_line(withheld: Mapping[str, str]) -> str:
    """Say which secrets were withheld and why, in one line ("" when none was)."""
    by_reason: dict[str, list[str]] = {}
    for name, why in sorted(withheld.items()):
        by_reason.setdefault(why, []).append(name)
    parts = [f"{', '.join(names)} ({why})" for why, names in by_reason.items()]
    return (
        ("secrets withheld until an admin accepts the code: " + "; ".join(parts)) if parts else ""
    )


def tool_secrets_withheld(tool: Tool) -> bool:
    """Tell whether a tool's unaccepted code keeps secrets from runs (the tool page says so).

    Its own secrets; and, for a published Python tool, every secret of its sandbox's runs.
    """
    if tool.code_accepted:
        return False
    if tool.secrets:
        return True
    if tool.kind == ToolKind.SCRIPT or not tool.published:
        return False
    sandbox = tool.sandbox
    return bool(sandbox.secrets) or any(t.secrets for t in sandbox.tool_rows() if t.published)
