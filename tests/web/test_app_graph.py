"""The apps of `jazzmine_web` import one another downwards only (docs/architecture.md)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "jazzmine_web"

# The apps from the bottom up: an app may import itself and the apps before it, never one after.
APPS = ("studio", "workers", "teams", "catalog", "runs", "scripttools", "reviews", "playground")
# Project modules any app may import; they import no app.
PROJECT_BASE = ("__init__", "broker", "celery", "env", "origins", "settings")
# Project modules that wire the apps together: they may import anything, nothing imports them.
PROJECT_TOP = ("asgi", "beat", "routing", "urls")

# Known imports against the order, each to be deleted once its edge is gone.
ALLOWED: set[tuple[str, str]] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(path: Path) -> Iterator[tuple[int, str]]:
    """Yield every `jazzmine_web` module a file imports, at module level or in a function."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target == PACKAGE:
                # `from jazzmine_web import celery`: the names are the project's modules.
                for alias in node.names:
                    yield node.lineno, f"{PACKAGE}.{alias.name}"
            else:
                yield node.lineno, target


def _part(module: str) -> str:
    """Return the app (or project module) a `jazzmine_web` module belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _may_import(importer: str, imported: str) -> bool:
    if importer == imported or imported in PROJECT_BASE:
        return True
    if importer in PROJECT_TOP:
        return True
    if importer in PROJECT_BASE or imported in PROJECT_TOP:
        return False
    return APPS.index(imported) < APPS.index(importer)


def _edges() -> Iterator[tuple[str, int, str]]:
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        if "migrations" in path.parts:
            continue
        for line, target in _imported(path):
            if target == PACKAGE or target.startswith(f"{PACKAGE}."):
                yield _module_name(path), line, target


def test_every_part_of_the_package_has_its_place_in_the_order() -> None:
    parts = {_part(_module_name(path)) for path in (ROOT / PACKAGE).rglob("*.py")}
    assert parts == {*APPS, *PROJECT_BASE, *PROJECT_TOP}


def test_no_app_imports_an_app_above_it() -> None:
    wrong = [
        f"{module}:{line} imports {target}"
        for module, line, target in _edges()
        if not _may_import(_part(module), _part(target)) and (module, target) not in ALLOWED
    ]
    assert not wrong, "\n".join(wrong)


def test_every_allowed_exception_is_still_needed() -> None:
    seen = {(module, target) for module, _line, target in _edges()}
    assert ALLOWED - seen == set()
