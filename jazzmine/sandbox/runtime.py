"""Lay out the files a sandbox runs from: harness, shared tool modules, tool sources, manifest.

The same layout is copied into a Docker image (`/opt/jazzmine`) and bound read-only into a
bubblewrap sandbox, so both backends run byte-identical code.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import json
import keyword
import shutil
import unicodedata
from pathlib import Path
from typing import Any, Protocol

from ..core.tools import safety
from .errors import BuildError

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

# Names a script already has: the harness puts every tool into the script's globals over
# them (`script_scope`), so a tool named `print`, `emit_result`, `json` or `ToolResponse`
# would quietly receive what each script of its sandbox prints, emits or encodes, and one
# named `__builtins__` would replace the script's builtins. Every builtin Python has, not
# only the ones a script gets: the validator reserves them all (and the site's own).
_TAKEN_NAMES: frozenset[str] = (
    frozenset(dir(builtins))
    | {"exit", "quit", "help", "copyright", "credits", "license"}
    | safety.SAFE_BUILTINS
    | safety.SAFE_EXCEPTIONS
    | safety.SAFE_CONSTANTS
    | safety.FRAMEWORK_NAMES
    | frozenset(safety.EMIT_HELPERS)
    | frozenset(safety.PREIMPORTED_MODULES)
)


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


def tool_name_problem(name: object) -> str | None:
    """Return why a tool cannot have this name in a script's globals, or None when it can."""
    if not isinstance(name, str) or not name.isidentifier():
        return f"tool name {name!r} must be a Python identifier"
    # Letters of other alphabets draw like ASCII ones (`get_оrders`, a Cyrillic о): a reviewer
    # reads the name in a script and in the review's list of tools and takes it for another.
    # And the parser reads identifiers NFKC-normalised: a script's `ｆetch(...)` calls `fetch`,
    # whichever tool holds that name. ASCII (all an LLM API takes in a function's name) is
    # both drawn and read as it is spelled.
    if not name.isascii():
        letter = next(char for char in name if not char.isascii())
        read = unicodedata.normalize("NFKC", name)
        reading = f"; Python reads it as {read!r} (NFKC)" if read != name else ""
        return (
            f"tool name {name!r} has a letter beyond ASCII (U+{ord(letter):04X}){reading}: "
            "tool names are ASCII letters, digits and '_', which no name can be drawn like"
        )
    if keyword.iskeyword(name):
        return f"tool name {name!r} is a Python keyword: no script can call it"
    if name.startswith("_"):
        return f"tool name {name!r} starts with '_': scripts may not name it"
    if name in _TAKEN_NAMES:
        return (
            f"tool name {name!r} is already a builtin, emit helper or module of every script; "
            "a tool of that name would take its place"
        )
    return None


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
    # Checked here too, whatever the caller did: rows stored before the catalog checked names
    # and registries built outside the catalog reach the harness through this alone.
    for t in tools:
        problem = tool_name_problem(t.name)
        if problem is not None:
            raise BuildError(step="stage tools", package=str(t.name), message=problem)
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
