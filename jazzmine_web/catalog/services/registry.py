"""The `ToolRegistry` of a sandbox built from its catalog rows: the one way any app gets one."""

from __future__ import annotations

import pickle
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from django.db.models import Model

from jazzmine.core.tools import SandboxConfig, ToolParameter, ToolRegistry
from jazzmine.scripttools import ScriptTool

from ...studio.checker import checked
from ..models import Sandbox, Tool, ToolKind
from ..reading import SourceTool, registry_read
from ..script_rows import script_tool_from_row

# Registries by the full content they are built from. Building one parses every tool's source
# (milliseconds, several times a run: the prompt, the check, the worker's preparation), while
# the rows rarely change between two requests. The registries are frozen: shared, read-only.
_built: OrderedDict[bytes, ToolRegistry] = OrderedDict()
_built_lock = threading.Lock()
REGISTRIES_KEPT = 32


def tool_parameters(rows: list[dict[str, Any]]) -> list[ToolParameter]:
    """Return the core's parameters of a tool row's stored parameter dicts."""
    return [ToolParameter.from_dict(dict(row)) for row in rows]


def registry_for_sandbox(
    sandbox: Sandbox, *, tools: Iterable[Tool] | None = None, include_unpublished: bool = False
) -> ToolRegistry:
    """Build the core `ToolRegistry` of a sandbox from its rows, without executing any tool.

    Every prompt, checksum and image in the web app comes from this registry, so they are
    exactly what `jazzmine.core.tools` computes. Pass `tools` to reuse rows already loaded.
    Unpublished tools (script tools without a passed trial) are left out unless asked for:
    they are never offered to an LLM nor baked into an image. The registry is shared with
    every caller asking for the same content, so it is frozen (`ToolRegistry.freeze`).
    """
    rows = sorted(tools if tools is not None else sandbox.tool_rows(), key=lambda t: t.pk)
    config = sandbox.to_config()  # clamped to the deployment's limits: part of the content
    key = _content_key(config, include_unpublished, rows)
    with _built_lock:
        registry = _built.get(key)
        if registry is not None:
            _built.move_to_end(key)
            return registry
    registry = _registry_build(config, rows, include_unpublished=include_unpublished)
    with _built_lock:
        _built[key] = registry
        while len(_built) > REGISTRIES_KEPT:
            _built.popitem(last=False)
    return registry


def _content_key(config: SandboxConfig, include_unpublished: bool, rows: list[Tool]) -> bytes:
    # A pickle, not a repr: the same content in a tenth of the time (a repr escapes every
    # character of every source: ~0.5 ms for the demo's tools, on the way to each run's first
    # event). Pickling is lossless, so two different contents never share a key; the same
    # content pickled differently (shared objects are written once) only misses the cache.
    return pickle.dumps((config, include_unpublished, [_fields(row) for row in rows]), protocol=5)


def _fields(row: Model) -> tuple[Any, ...]:
    # Every stored column: whatever a later change makes the registry read is in the key.
    return tuple(getattr(row, field.attname) for field in row._meta.concrete_fields)


def _registry_build(
    config: SandboxConfig, rows: list[Tool], *, include_unpublished: bool
) -> ToolRegistry:
    tools: list[SourceTool | ScriptTool] = []
    for row in sorted(rows, key=lambda t: t.name):
        if not row.published and not include_unpublished:
            continue
        if row.kind == ToolKind.SCRIPT:
            script_tool = script_tool_from_row(row)
            if script_tool is not None:
                tools.append(script_tool)
            continue
        tools.append(
            SourceTool(
                source=row.source,
                name=row.name,
                description=row.description,
                parameters=tool_parameters(row.parameters),
                dependencies=list(row.dependencies),
                secrets=list(row.secrets),
            )
        )
    # The sources are parsed: where they are big, in the checker process (a web process's
    # every socket waits on a parse here). A checker that fails raises `CheckerUnavailable`.
    chars = sum(len(tool.source) for tool in tools)
    return checked(chars, registry_read, config, tools)
