"""What a sandbox runtime holds imports only the stdlib and itself: nothing else is there."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from jazzmine.sandbox.runtime import PACKAGE_INITS, copied_files, harness_files


def _module_name(relative: str) -> str:
    """Name the module a runtime file is imported as (`a/b/__init__.py` is `a.b`)."""
    parts = relative.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(relative: str, source: Path) -> list[tuple[int, str, list[str]]]:
    """Return (line, absolute module, names taken from it) for every import of a file."""
    package = _module_name(relative)
    if not relative.endswith("__init__.py"):
        package = package.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source.read_text(), filename=str(source))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            module = node.module or ""
            if node.level:
                module = f"{base}.{module}" if module else base
            found.append((node.lineno, module, [alias.name for alias in node.names]))
    return found


def _bound(source: Path) -> set[str]:
    """Return the names a module binds at its top level (what `from it import x` may take)."""
    names = set()
    for node in ast.parse(source.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _problems(files: dict[str, Path]) -> list[str]:
    """Say which imports of `files` reach neither the stdlib nor another runtime module."""
    # The runtime's package __init__ files are empty: they bind nothing.
    modules = {_module_name(init): set() for init in PACKAGE_INITS}
    modules |= {_module_name(relative): _bound(source) for relative, source in files.items()}
    wrong = []
    for relative, source in files.items():
        for line, module, names in _imports(relative, source):
            if module.split(".")[0] in sys.stdlib_module_names:
                continue
            if module in modules and all(
                f"{module}.{name}" in modules or name in modules[module] for name in names
            ):
                continue
            wrong.append(f"{relative}:{line} imports {module} {names or ''}".rstrip())
    return wrong


def test_every_harness_module_imports_only_the_stdlib_the_harness_and_the_tool_modules():
    files = copied_files()
    assert set(harness_files()) <= set(files)
    assert len(harness_files()) > 2  # the entry, the package and its modules are all checked
    assert _problems(files) == []


def test_the_check_catches_an_import_the_runtime_does_not_hold(tmp_path):
    stray = tmp_path / "stray.py"
    stray.write_text(
        "import requests\nfrom . import nowhere\nfrom jazzmine.core import llm\n"
        "from jazzmine.core.tools import registry\nfrom .refs import _os_write, _os_open\n"
        "import jazzmine.core.tools.registry\nfrom .refs import _os_write\n"
    )
    files = {**copied_files(), "jazzmine/sandbox/harness/stray.py": stray}
    assert _problems(files) == [
        "jazzmine/sandbox/harness/stray.py:1 imports requests",
        "jazzmine/sandbox/harness/stray.py:2 imports jazzmine.sandbox.harness ['nowhere']",
        "jazzmine/sandbox/harness/stray.py:3 imports jazzmine.core ['llm']",
        "jazzmine/sandbox/harness/stray.py:4 imports jazzmine.core.tools ['registry']",
        "jazzmine/sandbox/harness/stray.py:5 imports jazzmine.sandbox.harness.refs "
        "['_os_write', '_os_open']",
        "jazzmine/sandbox/harness/stray.py:6 imports jazzmine.core.tools.registry",
    ]
