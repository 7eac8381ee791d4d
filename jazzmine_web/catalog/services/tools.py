"""Writes of tools: create, change, accept, publish and delete them, each change a version."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from jazzmine.core.tools import RegisteredTool
from jazzmine.core.tools import Tool as CoreTool

from ...studio.checker import CheckerUnavailable, checked
from ...studio.db import holds_row
from ..models import Sandbox, Tool, ToolKind, ToolVersion
from ..reading import SourceTool, tool_source_read
from .audit import catalog_change_announce, tool_audit_state, tool_change_announce
from .registry import script_tool_from_row, tool_parameters
from .rules import (
    ADMIN_TOOL_FIELDS,
    MAX_TOOL_SOURCE_CHARS,
    TOOL_FIELDS,
    actor_is_admin,
    admin_check,
    admin_fields_of_new,
    code_legibility_checked,
    description_checked,
    length_checked,
    max_chars,
    parameter_names_checked,
    prompt_text_checked,
    requirements_checked,
    secret_names_checked,
    tool_name_checked,
    tool_name_free,
    tool_room_check,
)

# What an admin's change touches for it to accept the tool's code: the code itself (and its
# dependencies, both in the checksum), or what that code may reach or skip (secrets,
# always_allow): granting those to code is accepting it. A change of the prompt or tags
# alone leaves acceptance as it was; the tool page's Accept button is for the rest.
ACCEPTING_FIELDS = frozenset({"source", "dependencies", *ADMIN_TOOL_FIELDS})


def tool_accept_if_admin(*, tool: Tool, actor: AbstractBaseUser | None) -> None:
    """Accept the tool's current code when a team admin wrote this change (not saved here).

    Whatever `always_allow` says: accepted code is what secrets reach (`Tool.code_accepted`).
    Anyone else's change leaves the acceptance as it was, so new code waits for an admin.
    """
    if actor_is_admin(actor=actor, team=tool.sandbox.team):
        tool.always_allow_accepted_checksum = tool.checksum
        tool.accepted_code_digest = tool.code_digest
        tool.always_allow_accepted_by = actor  # type: ignore[assignment]
        tool.always_allow_accepted_at = timezone.now()


def tool_publish(
    *, tool: Tool, published: bool = True, actor: AbstractBaseUser | None = None
) -> Tool:
    """Offer a tool to LLMs (or withdraw it); callers check the trial gate first.

    The audit trail says who did it: publishing puts the tool before every LLM of the sandbox.
    """
    if tool.published == published:
        return tool  # a second press: nothing changes, nothing to tell
    before = tool_audit_state(tool)
    with transaction.atomic():
        tool.published = published
        tool.published_at = timezone.now() if published else None
        tool.save(update_fields=["published", "published_at", "updated_at"])
        tool_change_announce(tool=tool, actor=actor, action="tool_changed", before=before)
    return tool


def tool_spec_check(
    *,
    name: str,
    description: str,
    parameters: list[dict[str, Any]],
    dependencies: list[str],
    secrets: list[str],
    source: str,
    sandbox_name: str = "default",
) -> RegisteredTool:
    """Register a tool's fields in a scratch registry; raise ValidationError on any problem.

    Every problem found is said at once, not the first alone (a person fixed a form's empty
    description, saved, and only then learnt that a dependency was no requirement): the
    checks of fields that do not depend on each other all run; the source is read whatever
    they found, with the fields that passed.
    """
    if len(source) > MAX_TOOL_SOURCE_CHARS:
        # Every registry of the sandbox parses it, in each process that builds one.
        raise ValidationError(
            f"the source is {len(source):,} characters; a tool's may be at most "
            f"{MAX_TOOL_SOURCE_CHARS:,}"
        )
    problems: list[str] = []

    def checked_value(check: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return check(*args, **kwargs)
        except ValidationError as exc:
            problems.extend(exc.messages)
            return None

    checked_value(description_checked, description)
    dependencies = checked_value(requirements_checked, dependencies) or []
    secrets = checked_value(secret_names_checked, secrets) or []
    # An admin accepts what the page shows.
    checked_value(code_legibility_checked, source, what="the source")
    try:
        params = tool_parameters(parameters)
        parameter_names_checked(p.name for p in params)
        registered, accepted = _source_read(
            SourceTool(
                source=source,
                name=name or None,
                description=description,
                parameters=params,
                dependencies=dependencies,
                secrets=secrets,
            ),
            sandbox_name,
        )
    except (TypeError, ValueError) as exc:
        raise ValidationError([*problems, str(exc)]) from exc
    except (RecursionError, MemoryError):
        # CPython's parser gives up on valid but extreme code (`1+1+...` 200 000 times, a long
        # `a.b.b...` chain, `not not ... 1`) with these instead of SyntaxError: a form error,
        # not a 500.
        raise ValidationError([*problems, "the source is too deeply nested to read"]) from None
    except CheckerUnavailable as exc:
        raise ValidationError(f"The source could not be checked: {exc.why}; try again.") from None
    if problems:
        raise ValidationError(problems)
    tool_name_checked(registered.name)  # the name a script calls it by (its def's, when unsaid)
    prompt_text_checked(registered.tool)
    length_checked(
        registered.function_name,
        limit=max_chars(Tool, "function_name"),
        what=f"the function name {registered.function_name[:40]}...",
    )
    if accepted is not None:
        unknown = [p.name for p in params if p.name not in accepted]
        if unknown:
            raise ValidationError(
                f"Tool {registered.name!r} documents parameters {unknown} that "
                f"{registered.function_name}() does not accept"
            )
    return registered


# The last few reads of a source, by everything they read: a save reads its fields twice, in
# the form's check and in the service's (which the API and the import need: they have no
# form), and a big source's read is a trip to the checker process of up to a second.
_READS_KEPT = 8
_reads: OrderedDict[tuple[Any, ...], tuple[RegisteredTool, set[str] | None]] = OrderedDict()
_reads_lock = threading.Lock()


def _source_read(tool: SourceTool, sandbox_name: str) -> tuple[RegisteredTool, set[str] | None]:
    """Read a tool's source (in the checker when big), or return the same read made just now.

    What a read returns is only read by its callers, so one result serves them all. A read
    that fails is not kept: it raises every time.
    """
    key = (
        sandbox_name,
        tool.source,
        tool.name,
        tool.description,
        json.dumps([param.to_dict() for param in tool.parameters], sort_keys=True),
        tuple(tool.dependencies),
        tuple(tool.secrets),
    )
    with _reads_lock:
        found = _reads.get(key)
        if found is not None:
            _reads.move_to_end(key)
            return found
    found = checked(len(tool.source), tool_source_read, tool, sandbox_name=sandbox_name)
    with _reads_lock:
        _reads[key] = found
        while len(_reads) > _READS_KEPT:
            _reads.popitem(last=False)
    return found


def tool_fields_check(fields: Mapping[str, Any], *, sandbox_name: str) -> RegisteredTool:
    """`tool_spec_check` over a tool's fields as one mapping: a form's cleaned data, a merged
    change. A list field the mapping leaves out or empty is an empty list."""
    return tool_spec_check(
        name=fields["name"],
        description=fields["description"],
        parameters=fields.get("parameters") or [],
        dependencies=fields.get("dependencies") or [],
        secrets=fields.get("secrets") or [],
        source=fields["source"],
        sandbox_name=sandbox_name,
    )


def tool_version_create(*, tool: Tool, author: AbstractBaseUser | None, note: str) -> ToolVersion:
    """Record the tool as it is now as its next version."""
    last = tool.versions.order_by("-number").values_list("number", flat=True).first() or 0
    return ToolVersion.objects.create(
        tool=tool,
        number=last + 1,
        source=tool.source,
        dependencies=list(tool.dependencies),
        checksum=tool.checksum,
        always_allow=tool.always_allow,
        secrets=list(tool.secrets),
        tool_json=_tool_json_of(tool),
        interface=tool_interface(tool),
        prompt=tool_prompt(tool),
        author=author,
        note=note[:300],
    )


# What the LLM reads of a tool: the `<tool>` XML is built from these fields and nothing else
# (`jazzmine.core.tools.Tool.build_prompt`); a change of any is a change of the prompt.
PROMPT_FIELDS = ("name", "description", "parameters")


def tool_interface(tool: Tool) -> dict[str, Any]:
    """Return the fields of a tool row that the XML prompt is built from."""
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": [dict(p) for p in tool.parameters],
    }


def tool_prompt(tool: Tool) -> str | None:
    """Return the `<tool>` XML the LLM reads for a tool row (None for a row the core refuses)."""
    try:
        return CoreTool(
            name=tool.name,
            description=tool.description,
            parameters=tool_parameters(tool.parameters),
        ).build_prompt()
    except (TypeError, ValueError):
        return None


def _tool_json_of(tool: Tool) -> dict[str, Any]:
    script_tool = script_tool_from_row(tool)
    if script_tool is None:
        return {}
    return {"runtime": script_tool.runtime, "tool.json": script_tool.to_json_dict()}


def tool_create(
    *,
    sandbox: Sandbox,
    name: str,
    description: str,
    source: str,
    parameters: list[dict[str, Any]] | None = None,
    dependencies: list[str] | None = None,
    secrets: list[str] | None = None,
    always_allow: bool = False,
    tags: list[str] | None = None,
    kind: str = ToolKind.PYTHON,
    author: AbstractBaseUser | None = None,
    note: str = "Created",
    actor: AbstractBaseUser | None = None,
) -> Tool:
    """Create a tool and its first version; `always_allow` and `secrets` are admin-only."""
    tool_room_check(sandbox=sandbox)  # first: a count, before any source is parsed
    registered = tool_spec_check(
        name=name,
        description=description,
        parameters=parameters or [],
        dependencies=dependencies or [],
        secrets=secrets or [],
        source=source,
        sandbox_name=sandbox.name,
    )
    tags = tags_clean(tags or [])
    admin_check(
        actor=actor,
        team=sandbox.team,
        fields=admin_fields_of_new({"always_allow": always_allow, "secrets": secrets}),
    )
    tool_name_free(sandbox=sandbox, name=registered.name)
    with transaction.atomic():
        tool = Tool(
            sandbox=sandbox,
            name=registered.name,
            description=description,
            parameters=[p.to_dict() for p in registered.tool.parameters],
            dependencies=list(dependencies or []),
            secrets=list(secrets or []),
            kind=kind,
            source=registered.source,
            function_name=registered.function_name,
            is_async=registered.is_async,
            always_allow=always_allow,
            tags=tags,
            checksum=registered.checksum,
        )
        tool_accept_if_admin(tool=tool, actor=actor)
        tool.save()
        version = tool_version_create(tool=tool, author=author, note=note)
        tool_change_announce(
            tool=tool, actor=actor, action="tool_created", before={}, version=version
        )
    return tool


def tags_clean(tags: Iterable[str]) -> list[str]:
    """Return tags lower-cased, without commas or blanks, sorted and each once.

    Together they fit the column they are searched in (`Tool.tags_index`, ",a,b,"): a
    longer list was a DataError on PostgreSQL, a 500; raise ValidationError saying so.
    """
    cleaned = {t.strip().lower().replace(",", "-") for t in tags}
    result = sorted(t for t in cleaned if t)
    # The two commas around them are the index's own: what a person may write is less.
    limit = max_chars(Tool, "tags_index") - 2
    length = len(",".join(result))
    if length > limit:
        raise ValidationError(
            f"the tags are {length:,} characters long with a comma between each; together "
            f"they may be at most {limit:,}"
        )
    return result


@dataclass(frozen=True)
class ToolChange:
    """What `tool_update` did: whether anything changed, the version it made, and what kind."""

    changed: bool
    new_version: ToolVersion | None = None
    # The code or dependencies changed: a new checksum, so the sandbox's image is rebuilt.
    code_changed: bool = False
    # The XML the LLM reads changed (name, description, parameters).
    prompt_changed: bool = False
    remarks: tuple[str, ...] = ()

    def summary(self) -> str:
        """Return what the change was, as a person reads it."""
        if not self.changed:
            return "nothing changed: no new version"
        if self.new_version is None:
            return "neither the prompt nor the code changed: no new version"
        if self.code_changed:
            both = "the prompt and the code" if self.prompt_changed else "the code"
            return f"{both} changed: a new checksum, the image needs a rebuild"
        if self.prompt_changed:
            return "the prompt changed, the code did not: same checksum, no image rebuild"
        return "what review allows changed"


@holds_row("tool")
def tool_update(
    *,
    tool: Tool,
    author: AbstractBaseUser | None = None,
    note: str = "",
    actor: AbstractBaseUser | None = None,
    **changes: Any,
) -> ToolChange:
    """Change a tool; a change of the prompt, code, dependencies, secrets or always_allow is a
    new version (with `note`). Only code and dependencies change the checksum (and the image).

    A member's code change is stored but not accepted: its secrets are withheld, and an
    always-allowed tool needs review, until an admin accepts it (`tool_code_accept`); an
    admin's own change of code, secrets or always_allow accepts the code it saves.
    """
    unknown = set(changes) - {"name", *TOOL_FIELDS}
    if unknown:
        raise TypeError(f"tool_update got unknown fields {sorted(unknown)}")
    if tool.kind == ToolKind.SCRIPT:
        # Its tool.json and script change through `script_tool_save`, which takes new code out
        # of the LLMs' reach until a trial passes; saved here, a `.py` import's function became
        # the script of a tool that stayed published.
        raise ValidationError(
            f"{tool.name} is a script tool: change it through its tool.json and script"
        )
    if "tags" in changes:
        changes["tags"] = tags_clean(changes["tags"])
    merged = {f: changes.get(f, getattr(tool, f)) for f in ("name", *TOOL_FIELDS)}
    registered = tool_fields_check(merged, sandbox_name=tool.sandbox.name)
    merged["source"] = registered.source
    merged["parameters"] = [p.to_dict() for p in registered.tool.parameters]
    merged["name"] = registered.name
    changed = {k: v for k, v in merged.items() if getattr(tool, k) != v}
    if not changed:
        return ToolChange(changed=False)
    admin_check(actor=actor, team=tool.sandbox.team, fields=set(changed) & set(ADMIN_TOOL_FIELDS))
    if "name" in changed:
        tool_name_free(sandbox=tool.sandbox, name=merged["name"], other_than=tool.pk)
    # By what the checksum reads, not by the checksum alone: two codes can share 16 hex chars.
    code_changed = registered.checksum != tool.checksum or (
        merged["source"] != tool.source
        or sorted(set(merged["dependencies"])) != sorted(set(tool.dependencies))
    )
    prompt_changed = tool_prompt(tool) != registered.tool.build_prompt()
    before = tool_audit_state(tool)
    digest_before = tool.code_digest
    with transaction.atomic():
        for key, value in changed.items():
            setattr(tool, key, value)
        tool.function_name = registered.function_name
        tool.is_async = registered.is_async
        tool.checksum = registered.checksum
        # The digest also binds the parameters a script may pass (`code_digest`): a member
        # who documents one leaves the code to be accepted again; an admin accepts it.
        if code_changed or tool.code_digest != digest_before or set(changed) & ACCEPTING_FIELDS:
            tool_accept_if_admin(tool=tool, actor=actor)
        tool.save()
        version = (
            tool_version_create(tool=tool, author=author, note=note or "Edited")
            if code_changed or prompt_changed or set(changed) & set(ADMIN_TOOL_FIELDS)
            else None
        )
        tool_change_announce(
            tool=tool, actor=actor, action="tool_changed", before=before, version=version
        )
    return ToolChange(
        changed=True,
        new_version=version,
        code_changed=code_changed,
        prompt_changed=prompt_changed,
    )


@holds_row("tool")
def tool_code_accept(
    *, tool: Tool, actor: AbstractBaseUser | None, seen_digest: str | None = None
) -> Tool:
    """Accept a tool's current code (team admins only); audited.

    From then on its secrets reach it and, if it asks to be, it is always allowed, until its
    code changes again by anyone but an admin. `seen_digest` is the `code_digest` of the code
    the admin was shown (None: a caller that read the row itself): code someone changed
    since, say a member swapping what the admin read for other code, is refused, never
    accepted unseen.
    """
    if actor is None or not actor_is_admin(actor=actor, team=tool.sandbox.team):
        raise PermissionDenied("Only team admins accept a tool's code.")
    if seen_digest is not None and seen_digest != tool.code_digest:
        raise ValidationError(
            f"Tool {tool.name}'s code changed since you looked (now {tool.checksum}); "
            "nothing was accepted. Read it again before accepting."
        )
    try:
        # A row stored before the rule: its page does not show the code that would run.
        code_legibility_checked(
            tool.source, what=f"Tool {tool.name}'s code", python=tool.runtime != "node"
        )
    except ValidationError as exc:
        raise ValidationError(f"{exc.messages[0]}; nothing was accepted.") from None
    if tool.code_accepted:
        return tool
    before, before_digest = tool.always_allow_accepted_checksum, tool.accepted_code_digest
    with transaction.atomic():
        tool_accept_if_admin(tool=tool, actor=actor)
        tool.save(
            update_fields=[
                "always_allow_accepted_checksum",
                "accepted_code_digest",
                "always_allow_accepted_by",
                "always_allow_accepted_at",
            ]
        )
        catalog_change_announce(
            sandbox=tool.sandbox,
            actor=actor,
            action="tool_accepted",
            target=f"tool {tool.name}",
            changes={
                "accepted_code_checksum": (before or None, tool.checksum),
                "accepted_code_digest": (before_digest or None, tool.accepted_code_digest),
            },
            # The code accepted, whole (as runs name it): not its 16-hex checksum.
            sha256=tool.accepted_code_digest,
        )
    return tool


# Its first name, from when acceptance was about always_allow alone.
tool_always_allow_accept = tool_code_accept


def tool_delete(*, tool: Tool, actor: AbstractBaseUser | None = None) -> None:
    """Delete a tool and its versions (team admins only); the audit keeps the deletion."""
    admin_check(actor=actor, team=tool.sandbox.team, fields=["tools (delete)"])
    with transaction.atomic():
        tool_change_announce(
            tool=tool, actor=actor, action="tool_deleted", before=tool_audit_state(tool)
        )
        tool.delete()
