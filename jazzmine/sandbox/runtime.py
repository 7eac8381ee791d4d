"""Lay out the files a sandbox runs from: harness, shared tool modules, tool sources, manifest.

The same layout is copied into a Docker image (`/opt/jazzmine`) and bound read-only into a
bubblewrap sandbox, so both backends run byte-identical code.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any, Protocol

_HERE = Path(__file__).resolve().parent
_TOOLS_PACKAGE = _HERE.parent / "core" / "tools"
HARNESS_FILE = _HERE / "harness.py"
# Files copied verbatim; the image gets empty package __init__ files so that importing
# `jazzmine.core.tools.types` never drags in the host-side registry.
SHARED_FILES = {
    "jazzmine/core/tools/safety.py": _TOOLS_PACKAGE / "safety.py",
    "jazzmine/core/tools/types.py": _TOOLS_PACKAGE / "types.py",
}
PACKAGE_INITS = (
    "jazzmine/__init__.py",
    "jazzmine/core/__init__.py",
    "jazzmine/core/tools/__init__.py",
)
# Bump when the image recipe changes in a way the copied files do not show.
RECIPE_VERSION = "1"


class ToolLike(Protocol):
    """What the stager needs of a registered tool."""

    name: str
    function_name: str
    source: str
    is_async: bool


@functools.cache
def runtime_version() -> str:
    """Return 8 hex chars identifying the harness and shared modules baked into a sandbox."""
    digest = hashlib.sha256(RECIPE_VERSION.encode())
    for path in (HARNESS_FILE, *SHARED_FILES.values()):
        digest.update(path.read_bytes())
        digest.update(b"\x00")
    return digest.hexdigest()[:8]


def manifest(tools: list[ToolLike]) -> dict[str, Any]:
    """Return the manifest the harness reads to load the tools."""
    return {
        "tools": [
            {
                "name": t.name,
                "function": t.function_name,
                "is_async": t.is_async,
                "file": f"tools/{t.name}.py",
            }
            for t in sorted(tools, key=lambda t: t.name)
        ]
    }


def stage_runtime(dest: Path, tools: list[ToolLike]) -> Path:
    """Write the runtime layout into `dest` (created if needed) and return it."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(HARNESS_FILE, dest / "harness.py")
    for init in PACKAGE_INITS:
        (dest / init).parent.mkdir(parents=True, exist_ok=True)
        (dest / init).write_text("")
    for relative, source in SHARED_FILES.items():
        shutil.copyfile(source, dest / relative)
    tools_dir = dest / "tools"
    tools_dir.mkdir(exist_ok=True)
    for t in tools:
        (tools_dir / f"{t.name}.py").write_text(t.source, encoding="utf-8")
    (dest / "manifest.json").write_text(json.dumps(manifest(tools), indent=2) + "\n")
    (dest / "site").mkdir(exist_ok=True)
    return dest
