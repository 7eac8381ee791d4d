"""Writes of the catalog, one module per job; the public names are re-exported here.

`registry` builds the core `ToolRegistry` of a sandbox (the one way any app gets one),
`sandboxes`, `tools`, `script_tools`, `rollback` and `secrets` change rows, `images` gives the
builder of a sandbox's images, `builds` makes images, `imports` imports tools; `rules` says who
may change what, `audit` tells the trail.
"""

from __future__ import annotations

from .builds import (
    BuilderFactory,
    BuildLineEvent,
    BuildStatusEvent,
    image_build_append_line,
    image_build_claim,
    image_build_fail_if_stale,
    image_build_run,
    image_build_set_status,
    image_build_start,
    image_builds_reap,
)
from .images import build_policy, sandbox_builder, sandbox_image_key
from .imports import ImportReport, tools_import
from .registry import registry_for_sandbox, script_tool_from_row
from .rollback import tool_rollback
from .rules import (
    ADMIN_SANDBOX_FIELDS,
    ADMIN_TOOL_FIELDS,
    BASH_LIMIT_FIELDS,
    BOUNDED_SANDBOX_FIELDS,
    SANDBOX_CONFIG_FIELDS,
    TOOL_FIELDS,
    actor_is_admin,
    base_images_allowed,
)
from .sandboxes import (
    sandbox_config_check,
    sandbox_create,
    sandbox_delete,
    sandbox_dependencies_accept,
    sandbox_update,
    sandbox_wheels_marked,
    sandbox_wheels_panel,
    sandbox_wheels_shown,
)
from .script_tools import script_tool_check, script_tool_save
from .secrets import secret_value_clear, secret_value_set
from .tools import (
    PROMPT_FIELDS,
    ToolChange,
    tool_always_allow_accept,
    tool_code_accept,
    tool_create,
    tool_delete,
    tool_fields_check,
    tool_interface,
    tool_prompt,
    tool_publish,
    tool_spec_check,
    tool_update,
)

__all__ = [
    "ADMIN_SANDBOX_FIELDS",
    "ADMIN_TOOL_FIELDS",
    "BASH_LIMIT_FIELDS",
    "BOUNDED_SANDBOX_FIELDS",
    "PROMPT_FIELDS",
    "SANDBOX_CONFIG_FIELDS",
    "TOOL_FIELDS",
    "BuildLineEvent",
    "BuildStatusEvent",
    "BuilderFactory",
    "ImportReport",
    "ToolChange",
    "actor_is_admin",
    "base_images_allowed",
    "build_policy",
    "image_build_append_line",
    "image_build_claim",
    "image_build_fail_if_stale",
    "image_build_run",
    "image_build_set_status",
    "image_build_start",
    "image_builds_reap",
    "registry_for_sandbox",
    "sandbox_builder",
    "sandbox_config_check",
    "sandbox_create",
    "sandbox_delete",
    "sandbox_dependencies_accept",
    "sandbox_image_key",
    "sandbox_update",
    "sandbox_wheels_marked",
    "sandbox_wheels_panel",
    "sandbox_wheels_shown",
    "script_tool_check",
    "script_tool_from_row",
    "script_tool_save",
    "secret_value_clear",
    "secret_value_set",
    "tool_always_allow_accept",
    "tool_code_accept",
    "tool_create",
    "tool_delete",
    "tool_fields_check",
    "tool_interface",
    "tool_prompt",
    "tool_publish",
    "tool_rollback",
    "tool_spec_check",
    "tool_update",
    "tools_import",
]
