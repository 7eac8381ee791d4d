"""The audit hook that refuses spawning, exec, imports and the like from a script's frames."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from .guards import SandboxViolation
from .protocol import SCRIPT_FILENAME
from .refs import _getframe

# Audit events a script's own frames may raise. Everything else raised while the nearest
# attributable frame is the script's is refused: fail closed on events this list never saw.
# `builtins.id` is raised by the standard library on the script's behalf: a dataclass repr
# (`print(response)`, `f"{response}"` of a ToolResponse) guards against recursion with id(),
# and refusing it failed ordinary scripts. It only reads a number; the script has no `id`
# of its own, and nothing in the sandbox turns an address into an object.
SCRIPT_EVENTS: frozenset[str] = frozenset({"time.sleep", "builtins.id"})


def install_audit_hook(
    tool_files: frozenset[str], trusted: frozenset[Any], is_tool: Callable[[Any], bool]
) -> None:
    """Refuse audited actions (spawn, exec, import, open, ...) that the script itself makes.

    Walk from the frame that raised the event outwards: a tool's frame or the harness's
    tool-call wrapper (`trusted` code objects) means a tool acts and may; the script's frame
    means the script acts and may not. Stdlib and harness frames in between are skipped, so
    `subprocess.run` reached by the script still counts as the script's. With neither on the
    stack the harness itself acts (before or after the script), which is allowed.

    A wrapper vouches only while it calls the tool it was made for (`is_tool` of its
    `function`): a callable swapped into its closure is the script acting through it.
    """
    local = threading.local()

    def hook(event: str, _args: tuple[Any, ...]) -> None:
        if event in SCRIPT_EVENTS or getattr(local, "busy", False):
            return
        local.busy = True
        try:
            frame = _getframe(1)
            while frame is not None:
                code = frame.f_code
                if code in trusted:
                    if is_tool(frame.f_locals.get("function")):
                        return
                    raise SandboxViolation(f"{event!r} is not allowed from a sandbox script")
                filename = code.co_filename
                if filename == SCRIPT_FILENAME:
                    raise SandboxViolation(f"{event!r} is not allowed from a sandbox script")
                if filename in tool_files:
                    return
                frame = frame.f_back
        finally:
            local.busy = False

    sys.addaudithook(hook)
