"""What the static reading of a script found, whatever its language."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ScriptScan:
    """What the static reading of a script found."""

    runtime: str
    error: str | None = None
    reads_stdin: bool = False
    json_outputs: list[int] = field(default_factory=list)
    debug_outputs: list[int] = field(default_factory=list)
    stderr_writes: list[int] = field(default_factory=list)
    error_exits: list[int] = field(default_factory=list)
    # name -> ("literal", value) | ("none", None) | ("unknown", None)
    defaults: dict[str, tuple[str, Any]] = field(default_factory=dict)
    guarded: set[str] = field(default_factory=set)
    imports: dict[str, int] = field(default_factory=dict)
