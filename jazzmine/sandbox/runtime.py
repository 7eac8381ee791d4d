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
HARNESS_PACKAGE = _HERE / "harness"
# The file the runners start (`python -I <root>/harness.py <root>`).
HARNESS_ENTRY = "harness.py"
# Files copied verbatim; the image gets empty package __init__ files so that importing
# `jazzmine.core.tools.types` or the harness never drags in the host-side registry or runners.
SHARED_FILES = {
    "jazzmine/core/tools/safety.py": _TOOLS_PACKAGE / "safety.py",
    "jazzmine/core/tools/types.py": _TOOLS_PACKAGE / "types.py",
}
PACKAGE_INITS = (
    "jazzmine/__init__.py",
    "jazzmine/core/__init__.py",
    "jazzmine/core/tools/__init__.py",
    "jazzmine/sandbox/__init__.py",
)
# Bump when the image recipe changes in a way the copied files do not show.
RECIPE_VERSION = "1"


class ToolLike(Protocol):
    """What the stager needs of a registered tool."""

    name: str
    function_name: str
    source: str
    is_async: bool


def harness_files() -> dict[str, Path]:
    """Return every file of the harness, by its path in the runtime, with its source."""
    entry = HARNESS_PACKAGE / "entry.py"
    files = {HARNESS_ENTRY: entry}
    for source in sorted(HARNESS_PACKAGE.glob("*.py")):
        if source != entry:  # one entry per runtime, at its root
            files[f"jazzmine/sandbox/harness/{source.name}"] = source
    return files


def copied_files() -> dict[str, Path]:
    """Return every file copied verbatim into a runtime, by its path there."""
    return {**harness_files(), **SHARED_FILES}


@functools.cache
def runtime_version() -> str:
    """Return 8 hex chars identifying the harness and shared modules baked into a sandbox."""
    digest = hashlib.sha256(RECIPE_VERSION.encode())
    for relative, path in copied_files().items():
        # The path too: moving a file between modules changes what runs, not only its bytes.
        digest.update(relative.encode())
        digest.update(b"\x00")
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
    for init in PACKAGE_INITS:
        (dest / init).parent.mkdir(parents=True, exist_ok=True)
        (dest / init).write_text("")
    for relative, source in copied_files().items():
        (dest / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest / relative)
    tools_dir = dest / "tools"
    tools_dir.mkdir(exist_ok=True)
    for t in tools:
        (tools_dir / f"{t.name}.py").write_text(t.source, encoding="utf-8")
    (dest / "manifest.json").write_text(json.dumps(manifest(tools), indent=2) + "\n")
    (dest / "site").mkdir(exist_ok=True)
    return dest
