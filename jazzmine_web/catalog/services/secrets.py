"""Writes of a sandbox's secret values (stored encrypted, never shown again), and the gate
that says which of them may reach the code of a run or trial: only code an admin accepted."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from jazzmine.sandbox.wheels import wheels_digest

from ..crypto import decrypt, encrypt
from ..models import Sandbox, SecretValue, Tool, ToolKind
from .audit import catalog_change_announce
from .rules import admin_check, max_chars


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
    # A name declared before names were bounded (`secret_names_checked`) is still listed for
    # a value: the column it is stored under would refuse it on PostgreSQL, a 500.
    limit = max_chars(SecretValue, "name")
    if len(name) > limit:
        raise ValidationError(
            f"The secret's name is {len(name):,} characters long; a value is stored under a "
            f"name of at most {limit:,}: declare a shorter one"
        )
    if not value:
        raise ValidationError(f"Give a value for {name!r}, or clear it instead")
    _value_size_check(sandbox, name, value)
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


# The most one secret's value may hold, and all of a sandbox's together (UTF-8 bytes). A
# value reaches its code as an environment variable, which Linux caps at 128 KiB (a trial of
# a 200,000-character value failed with "argument list too long"), and the tools' own secrets
# go to them through one pipe of 1 MiB (with every tool that declares one getting a copy):
# past it, no tool got its own secrets, which said so only in the run's log.
MAX_SECRET_VALUE_BYTES = 32 * 1024
MAX_SANDBOX_SECRETS_BYTES = 256 * 1024


def _value_size_check(sandbox: Sandbox, name: str, value: str) -> None:
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_SECRET_VALUE_BYTES:
        raise ValidationError(
            f"The value of {name} is {size:,} bytes; a secret holds at most "
            f"{MAX_SECRET_VALUE_BYTES:,} (keys, tokens and certificates are far smaller): "
            "store a large file elsewhere and give the secret its address or a key to it"
        )
    others = SecretValue.objects.filter(sandbox=sandbox).exclude(name=name)
    total = size + sum(len(decrypt(row.ciphertext).encode()) for row in others)
    if total > MAX_SANDBOX_SECRETS_BYTES:
        raise ValidationError(
            f"With this value the secrets of {sandbox.name} would hold {total:,} bytes "
            f"together; a sandbox holds at most {MAX_SANDBOX_SECRETS_BYTES:,}: clear one it "
            "no longer needs first"
        )


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
    secret at all reaches that process (`shut`). So do dependencies, whoever declares them:
    their wheels are unpacked into the one directory the run's process imports from, so a
    sandbox's dependencies no admin accepted, or a script tool's with code no admin accepted,
    shut it too. A script tool without dependencies runs as a process of its own that sees
    only the secrets it declares, so one whose code is not accepted loses just those
    (`tools`), wherever else they are declared: its runner would pass them on.
    """

    shut: str = ""  # why nothing reaches the process ("" when its code is all accepted)
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


def tool_shares_the_process(tool: Tool) -> bool:
    """Tell whether a tool's code (or its dependencies' code) loads into the run's process."""
    return tool.kind != ToolKind.SCRIPT or bool(tool.dependencies)


def secrets_gate(*, tools: Iterable[Tool], sandbox: Sandbox | None = None) -> SecretsGate:
    """Return the gate of a process that loads `tools` (a run's published tools, a trial's one).

    Pass the `sandbox` when the process imports from its image's wheels (a run does; a
    trial's script does not): then its own dependencies count too.
    """
    unaccepted = [t for t in tools if not t.code_accepted]
    # Named one by one: the person reading it knows which code waits for an admin.
    python = [t.code_acceptance_problem for t in unaccepted if t.kind != ToolKind.SCRIPT]
    wheels = [
        t.code_acceptance_problem
        for t in unaccepted
        if t.kind == ToolKind.SCRIPT and tool_shares_the_process(t)
    ]
    reasons = []
    if python:
        reasons.append(f"{'; '.join(python)} (Python tools share the run's process)")
    if wheels:
        reasons.append(
            f"{'; '.join(wheels)} (a script tool's dependencies load into the run's process)"
        )
    if sandbox is not None and not sandbox.dependencies_accepted:
        reasons.append(
            f"{sandbox.dependencies_acceptance_problem} (they load into the run's process)"
        )
    return SecretsGate(
        shut="; ".join(reasons),
        tools={t.name: t.code_acceptance_problem for t in unaccepted},
    )


SANDBOX_PAGE = "the sandbox page"


def wheels_accepted_problem(
    *, accepted: Sequence[str] | None, image: Sequence[str] | None, where: str = SANDBOX_PAGE
) -> str:
    """Say why the wheels of an image may not run beside secrets ("" when they may).

    `image` is what the image's label says it holds (None: it does not say); `accepted` the
    sandbox's `accepted_wheels` (or, for a trial, the files accepted for it). An image with
    no wheel holds nothing to accept. Compared as whole files (name and SHA-256): the same
    pinned version can be another file. `where` names the page that offers the files.
    """
    if image is not None and not image:
        return ""
    if image is None:
        return (
            "this image does not say which wheels it holds (it was built before images "
            f"recorded them): rebuild it, then an admin can accept its wheels on {where}"
        )
    if accepted is None:
        return (
            f"no admin has accepted the wheels in this image yet ({len(image)} file(s)); "
            f"an admin can accept them on {where}"
        )
    if wheels_digest(image) == wheels_digest(accepted):
        return ""
    # Counted by file name: one wheel swapped for another build of it is one difference.
    differ = len({line.split(" ")[0] for line in set(image) ^ set(accepted)})
    return (
        f"the wheels in this image are not the ones an admin accepted: {differ} differ; "
        f"an admin can accept them on {where}"
    )


def trial_wheels_problem(*, tool: Tool, code_digest: str, image: Sequence[str] | None) -> str:
    """Say why the wheels of a trial's image may not run beside its secrets ("" when they may).

    They may when they are the sandbox's accepted files, or the files an admin accepted on
    the tool page for trials of this very code (`code_digest`, the whole digest of the code
    the trial runs): a tool with dependencies is tried before it is published, so in an image
    the sandbox page never offers. Files accepted for other code do not count.
    """
    if not wheels_accepted_problem(accepted=tool.sandbox.accepted_wheels, image=image):
        return ""
    where = f"tool {tool.name}'s page"
    accepted = tool.trial_wheels_accepted_for(code_digest)
    if accepted is None and tool.trial_accepted_code_digest and image:
        # Said as it is: the admin accepted files, for code this trial does not run.
        return (
            f"the wheel files accepted for tool {tool.name}'s trials were accepted for other "
            f"code of it, not this code ({len(image)} file(s) in this image); "
            f"an admin can accept them on {where}"
        )
    # Told against what this code's acceptance holds, else against the sandbox's files.
    return wheels_accepted_problem(
        accepted=accepted if accepted is not None else tool.sandbox.accepted_wheels,
        image=image,
        where=where,
    )


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

    Its own secrets; and, for a published Python tool or a script tool with dependencies,
    every secret of its sandbox's runs.
    """
    if tool.code_accepted:
        return False
    if tool.secrets:
        return True
    if not tool_shares_the_process(tool) or not tool.published:
        return False
    sandbox = tool.sandbox
    return bool(sandbox.secrets) or any(t.secrets for t in sandbox.tool_rows() if t.published)
