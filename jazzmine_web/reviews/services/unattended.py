"""What a script nobody read may call: the always-allowed tools, at the code an admin accepted."""

from __future__ import annotations

from typing import Any

from ...catalog.models import Sandbox
from ..models import ReviewPolicy
from ..selectors import review_settings_for


class NeedsPerson(Exception):
    """A script nobody read calls (or may call) tools only a person may let it run."""

    def __init__(self, tools: list[str]) -> None:
        self.tools = tools
        names = ", ".join(tools)
        super().__init__(
            f"it calls {names}, which a person must allow: read the script, then press Run "
            "to run it yourself"
        )


def always_allowed_pins(sandbox: Sandbox) -> dict[str, str]:
    """Return the sandbox's always-allowed tools, each bound to the code an admin accepted.

    {name: the whole `code_digest` of that code}; not its checksum, which other code may
    share (16 hex chars). The worker drops a tool whose code changed since
    (`runs.preparation`).
    """
    rows = sandbox.tools.filter(published=True, always_allow=True)
    return {tool.name: tool.code_digest for tool in rows if tool.is_always_allowed}


def unattended_allowed_tools(
    *, sandbox: Sandbox, tools_called: list[dict[str, Any]]
) -> dict[str, str] | None:
    """Return what a script no person read may call when it runs; None is every tool.

    As for an agent's script: a sandbox that never reviews trusts its automation with every
    tool; otherwise only the always-allowed tools, and a script that calls, or may call, any
    other one (the reading counts a doubt as a call) raises `NeedsPerson` and does not run.
    """
    if review_settings_for(sandbox).policy == ReviewPolicy.NEVER:
        return None
    needs = [tool["name"] for tool in tools_called if not tool.get("always_allow")]
    if needs:
        raise NeedsPerson(needs)
    return always_allowed_pins(sandbox)
