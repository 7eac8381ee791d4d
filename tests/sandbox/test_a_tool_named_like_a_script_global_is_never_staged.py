"""The runtime stager refuses a tool whose name would take over a script global.

The harness puts the tools over the builtins, emit helpers and module views of the script
(`script_scope`): a tool named `print` receives every line a script prints, one named
`emit_result` every result. The catalog refuses such names; the stager refuses them too,
for rows stored before and registries built outside the catalog.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jazzmine.core.tools import SandboxConfig, ToolRegistry
from jazzmine.sandbox.errors import BuildError
from jazzmine.sandbox.runtime import stage_runtime

SOURCE = "def taker(*args, **kwargs):\n    return ToolResponse(success=True, data=repr(args))\n"


def registry_with(name: str) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name="s"))
    registry.register_source(SOURCE, sandbox="s", description="Takes.", name=name)
    return registry


@pytest.mark.parametrize(
    "name",
    # ... and one drawn like another (a Cyrillic а): stored before the catalog refused it.
    [
        "print",
        "emit_result",
        "json",
        "ToolResponse",
        "__builtins__",
        "ｔaker",
        "class",
        "t\u0430ker",
    ],
)
def test_a_taken_name_is_refused_before_anything_is_written(tmp_path: Path, name: str) -> None:
    with pytest.raises(BuildError, match="stage tools"):
        stage_runtime(tmp_path / "runtime", registry_with(name).tools("s"))
    assert not (tmp_path / "runtime").exists()


def test_a_plain_name_is_staged(tmp_path: Path) -> None:
    runtime = stage_runtime(tmp_path / "runtime", registry_with("taker").tools("s"))
    assert (runtime / "tools" / "taker.py").read_text() == SOURCE
