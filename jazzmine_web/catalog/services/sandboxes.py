"""Writes of sandboxes: create, change and delete them, checked against the core's config."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from jazzmine.core.tools import SandboxConfig
from jazzmine.sandbox.wheels import wheels_digest

from ...studio.db import holds_row
from ...teams.models import Team
from ..models import Backend, Sandbox
from .audit import catalog_change_announce
from .builds import sandbox_built_wheels
from .images import sandbox_builder, sandbox_image_wheels
from .registry import registry_for_sandbox
from .rules import (
    ADMIN_SANDBOX_FIELDS,
    BASH_LIMIT_FIELDS,
    SANDBOX_CONFIG_FIELDS,
    actor_is_admin,
    admin_check,
    backend_network_check,
    base_image_check,
    bounds_check,
    description_checked,
    requirements_checked,
    secret_names_checked,
)
from .secrets import wheels_accepted_problem


def sandbox_config_check(*, name: str, **fields: Any) -> SandboxConfig:
    """Validate sandbox fields with the core's SandboxConfig; raise ValidationError if bad.

    Dependencies must be plain requirements, secrets names whose values can be stored, the
    base image one the operator offers, and the numbers inside the deployment's bounds.
    """
    if "dependencies" in fields:
        fields["dependencies"] = requirements_checked(fields["dependencies"])
    if "secrets" in fields:
        fields["secrets"] = secret_names_checked(fields["secrets"])
    if "base_image" in fields:
        base_image_check(fields["base_image"])
    bounds_check(fields)
    backend_network_check(fields)
    try:
        return SandboxConfig(name=name, **fields)
    except (TypeError, ValueError) as exc:
        raise ValidationError(str(exc)) from exc


def sandbox_accept_if_admin(*, sandbox: Sandbox, actor: AbstractBaseUser | None) -> None:
    """Accept the sandbox's dependencies when a team admin wrote this change (not saved here).

    Anyone else's change leaves the acceptance as it was, so a dependency a member adds waits
    for an admin, and no secret reaches the sandbox's runs meanwhile.

    The admin's edit accepts the list, never files: no image of it exists yet, so nobody has
    seen which wheels pip will pick for it (nor the unpinned dependencies of dependencies).
    The accepted wheels are cleared, and secrets reach runs again once the admin presses
    Accept on the page listing the built image's wheels. Binding the first build's files
    automatically would accept exactly what the hole is about (whatever the index served
    that day) with no person reading it; one more click after a build is the price.
    """
    if actor_is_admin(actor=actor, team=sandbox.team):
        sandbox.accepted_dependencies = list(sandbox.dependencies)
        sandbox.accepted_dependencies_by = actor  # type: ignore[assignment]
        sandbox.accepted_dependencies_at = timezone.now()
        sandbox.accepted_wheels = None


@dataclass(frozen=True)
class WheelsShown:
    """The wheel files the Accept button binds, and where they were read.

    From the image the current tag names, as the worker reads them before a run's secrets go
    in; from the newest build row of the current content only when the engine holds no such
    image (a run would make it again) or does not answer.
    """

    IMAGE = "image"  # the label of the image runs start now
    UNLABELLED = "unlabelled"  # that image exists, but its label does not say
    BUILD = "build"  # no image: the newest build of the current content says
    NONE = "none"  # no image, and no build of the current content known

    files: list[str] | None
    source: str
    # The engine was asked and did not answer (stopped, or none reachable from this web
    # process): the rows were read instead, and an image a run made cannot be told from none.
    engine_silent: bool = False

    @property
    def digest(self) -> str:
        """Return the digest the page's form carries ("" when it lists no file list)."""
        return wheels_digest(self.files) if self.files is not None else ""


def sandbox_wheels_shown(*, sandbox: Sandbox) -> WheelsShown:
    """Return the wheel files the Accept button binds (files None: none known) and their source.

    The digest is "" when no file list is known: the page says to build first, and the form
    carries "" so that a build finishing meanwhile is not accepted unseen.

    The image is asked first: a run or a trial makes a missing image itself, with no build
    row, so after any tool edit the rows alone said "no build known" of an image the worker
    read, accepted files and all, and Accept bound nothing while the warning stayed. A
    bubblewrap sandbox has no image (its runs stage their wheels): its rows say.
    """
    silent = False
    if sandbox.backend == Backend.DOCKER:
        found = sandbox_image_wheels(sandbox)
        if found is not None and found.exists:
            if found.wheels is None:
                return WheelsShown(None, WheelsShown.UNLABELLED)
            return WheelsShown(found.wheels, WheelsShown.IMAGE)
        silent = found is None
    wheels = sandbox_built_wheels(sandbox=sandbox)
    if wheels is None:
        return WheelsShown(None, WheelsShown.NONE, engine_silent=silent)
    return WheelsShown(wheels, WheelsShown.BUILD, engine_silent=silent)


@dataclass(frozen=True)
class WheelsPanel:
    """What the sandbox page says of its dependencies' acceptance and their wheel files."""

    shown: WheelsShown
    marked: list[tuple[str, str, str]]
    # Whether the worker withholds secrets for the wheels (by its rule, `_wheels_withheld`).
    pending: bool
    # Why secrets are withheld, the dependencies' and the wheels' reasons ("" when they are not).
    withheld: str


def sandbox_wheels_panel(*, sandbox: Sandbox) -> WheelsPanel:
    """Return what the page says of the sandbox's dependencies, by the worker's rule and inputs.

    The worker checks the wheels only when the sandbox or its published tools have
    dependencies (`runs.preparation._wheels_to_check`), and withholds secrets when
    `wheels_accepted_problem` has something to say of the image's files: so does the page.
    """
    has_dependencies = bool(registry_for_sandbox(sandbox).aggregate_dependencies(sandbox.name))
    # Without dependencies, and nothing to accept, the panel shows nothing: the engine is
    # not asked on each view of the page.
    shown = (
        sandbox_wheels_shown(sandbox=sandbox)
        if has_dependencies or not sandbox.dependencies_accepted
        else WheelsShown(None, WheelsShown.NONE)
    )
    problem = ""
    if has_dependencies:
        if shown.source == WheelsShown.NONE and shown.engine_silent:
            problem = (
                f"the Docker engine did not answer, so the wheel files of sandbox "
                f"{sandbox.name}'s image cannot be read, and no build of them is recorded"
            )
        elif shown.source == WheelsShown.NONE:
            problem = (
                f"no image of sandbox {sandbox.name}'s dependencies is known yet to read their "
                "wheel files from: build it, then an admin can accept them on the sandbox page"
            )
        else:
            problem = wheels_accepted_problem(accepted=sandbox.accepted_wheels, image=shown.files)
    reasons = [r for r in (sandbox.dependencies_acceptance_problem, problem) if r]
    return WheelsPanel(
        shown=shown,
        marked=(sandbox_wheels_marked(sandbox=sandbox, wheels=shown.files) if shown.files else []),
        pending=bool(problem),
        withheld="; ".join(reasons),
    )


def sandbox_wheels_marked(*, sandbox: Sandbox, wheels: list[str]) -> list[tuple[str, str, str]]:
    """Return each wheel file of a build, its kind and what an admin already accepted it for.

    Kinds: "runs" (accepted for this sandbox's runs), "trials" (for trials of a tool's current
    code), "other" (not the file accepted under its name), "new".

    An image whose dependencies changed by one package keeps most of its files: what the
    admin must read before accepting are the files no one accepted, and above all a file
    that takes the name of one accepted but is another (a different hash under the same
    pinned version). A file is known only as the same file, its name and hash alike; the
    marks inform, they accept nothing.
    """
    known: dict[str, tuple[str, str]] = {}
    for tool in sandbox.tools.all():
        for line in tool.trial_wheels_accepted_for(tool.code_digest) or ():
            known.setdefault(line, ("trials", f"accepted for trials of {tool.name}"))
    for line in sandbox.accepted_wheels or ():
        known[line] = ("runs", "accepted for this sandbox's runs")
    names = {line.split(" ", 1)[0] for line in known}
    marked = []
    for line in wheels:
        kind, note = known.get(line) or (
            ("other", "another file than the one accepted under this name")
            if line.split(" ", 1)[0] in names
            else ("new", "new")
        )
        marked.append((line, kind, note))
    return marked


def sandbox_dependencies_accept(
    *,
    sandbox: Sandbox,
    actor: AbstractBaseUser | None,
    seen: list[str] | None = None,
    seen_wheels: str | None = None,
) -> Sandbox:
    """Accept a sandbox's current dependencies and its built image's wheels (admins only).

    From then on secrets reach its runs again (as far as its tools' code is accepted), until
    anyone but an admin adds, changes or removes a dependency, or a run's image holds other
    wheel files. `seen` is the list the admin was shown, `seen_wheels` the digest of the wheel
    files the page listed ("" for none; None: a caller that read the rows itself): anything
    changed since, say a member swapping the package the admin read for another or a rebuild
    that fetched other files, is refused, never accepted unseen. The files are the ones the
    worker reads (`sandbox_wheels_shown`: the current image's, whoever made it). With no
    image or build of the current dependencies known, the list alone is accepted (as an
    admin's edit does) and no wheel is bound: runs get no secret until the admin accepts
    again after a build.
    """
    _admin_only(sandbox=sandbox, actor=actor)
    # The engine is asked before the row is held: held, it is the whole database's write
    # lock on SQLite, and every run's events and every edit would wait out an engine that is
    # slow to answer (up to its 2 s timeout) for each press of Accept.
    asked = (_image_tag(sandbox), sandbox_wheels_shown(sandbox=sandbox))
    return _dependencies_accept(
        sandbox=sandbox, actor=actor, seen=seen, seen_wheels=seen_wheels, asked=asked
    )


def _admin_only(*, sandbox: Sandbox, actor: AbstractBaseUser | None) -> None:
    if actor is None or not actor_is_admin(actor=actor, team=sandbox.team):
        raise PermissionDenied("Only team admins accept a sandbox's dependencies.")


def _image_tag(sandbox: Sandbox) -> str | None:
    """Return the tag of the image a run of the sandbox starts now (None: none, or unknown)."""
    if sandbox.backend != Backend.DOCKER:
        return None  # its files are its build rows': read where the row is held
    try:
        return sandbox_builder(sandbox).image_tag(sandbox.name)
    except Exception:  # a base image the operator no longer allows, say: read again, held
        return None


@holds_row("sandbox")
def _dependencies_accept(
    *,
    sandbox: Sandbox,
    actor: AbstractBaseUser | None,
    seen: list[str] | None,
    seen_wheels: str | None,
    asked: tuple[str | None, WheelsShown],
) -> Sandbox:
    """Accept, on the row as it is now and held; `asked`: the image tag and files read before."""
    _admin_only(sandbox=sandbox, actor=actor)
    if seen is not None and list(seen) != list(sandbox.dependencies):
        raise ValidationError(
            f"Sandbox {sandbox.name}'s dependencies changed since you looked "
            f"(now: {', '.join(sandbox.dependencies) or 'none'}); nothing was accepted. "
            "Read them again before accepting."
        )
    tag, shown = asked
    if tag is None or _image_tag(sandbox) != tag:
        # Changed between the two reads (its dependencies, its tools' code): what was read
        # is of another image, so the current one is read now, held.
        shown = sandbox_wheels_shown(sandbox=sandbox)
    wheels, digest = shown.files, shown.digest
    if seen_wheels is not None and seen_wheels != digest:
        raise ValidationError(
            f"The wheel files of sandbox {sandbox.name}'s image changed since you looked "
            f"(now {len(wheels or [])} file(s)); nothing was accepted. "
            "Read them again before accepting."
        )
    if sandbox.dependencies_accepted and (wheels is None or sandbox.accepted_wheels == wheels):
        return sandbox
    before = list(sandbox.accepted_dependencies)
    before_wheels = sandbox.accepted_wheels
    with transaction.atomic():
        sandbox_accept_if_admin(sandbox=sandbox, actor=actor)
        sandbox.accepted_wheels = wheels
        sandbox.save(
            update_fields=[
                "accepted_dependencies",
                "accepted_dependencies_by",
                "accepted_dependencies_at",
                "accepted_wheels",
                "updated_at",
            ]
        )
        catalog_change_announce(
            sandbox=sandbox,
            actor=actor,
            action="sandbox_changed",
            target=f"sandbox {sandbox.name}",
            changes={
                "accepted_dependencies": (before, list(sandbox.accepted_dependencies)),
                "accepted_wheels": (before_wheels, wheels),
            },
        )
    return sandbox


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
    admin_check(
        actor=actor,
        team=team,
        fields=[f for f in ADMIN_SANDBOX_FIELDS if f in config and config[f] != defaults[f]],
    )
    description_checked(description)
    bash = _bash_limits_check({f: config.pop(f) for f in BASH_LIMIT_FIELDS if f in config})
    checked = sandbox_config_check(name=name, **config)
    if Sandbox.objects.filter(team=team, name=name).exists():
        raise ValidationError(f"Team {team.slug!r} already has a sandbox named {name!r}")
    values = {f: getattr(checked, f) for f in SANDBOX_CONFIG_FIELDS}
    with transaction.atomic():
        sandbox = Sandbox(team=team, name=name, description=description, **values, **bash)
        sandbox_accept_if_admin(sandbox=sandbox, actor=actor)
        sandbox.save()
        catalog_change_announce(
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
    bounds_check(values)
    return values


@holds_row("sandbox")
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
    admin_check(actor=actor, team=sandbox.team, fields=set(changed) & set(ADMIN_SANDBOX_FIELDS))
    _bash_limits_check({k: v for k, v in changed.items() if k in BASH_LIMIT_FIELDS})
    if "description" in changed:
        description_checked(changed["description"])
    if "dependencies" in changed:
        changed["dependencies"] = requirements_checked(changed["dependencies"])
    if "secrets" in changed:
        changed["secrets"] = secret_names_checked(changed["secrets"])
    if "base_image" in changed:
        base_image_check(changed["base_image"])
    bounds_check(changed)
    merged = {f: changed.get(f, getattr(sandbox, f)) for f in SANDBOX_CONFIG_FIELDS}
    if {"network", "backend"} & set(changed):
        backend_network_check(merged)
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
        if "dependencies" in changed:
            sandbox_accept_if_admin(sandbox=sandbox, actor=actor)
        sandbox.save()
        catalog_change_announce(
            sandbox=sandbox,
            actor=actor,
            action="sandbox_changed",
            target=f"sandbox {sandbox.name}",
            changes={k: (before[k], changed[k]) for k in changed},
        )
    return True


def sandbox_delete(*, sandbox: Sandbox, actor: AbstractBaseUser | None = None) -> None:
    """Delete a sandbox with its tools, versions, secrets and builds (team admins only)."""
    admin_check(actor=actor, team=sandbox.team, fields=["sandboxes (delete)"])
    sandbox.delete()
