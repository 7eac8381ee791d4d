"""The web app's modules import one another without a cycle, and none imports late to hide one.

A cycle between modules (the review services and their webhooks, the run worker and the run
services) made the order of imports matter, and was papered over with imports inside
functions. Read from the source: every module-level import of a `jazzmine_web` module is an
edge (importing a submodule from outside its package runs the package's `__init__` first, so
that is an edge too), and the graph must have no cycle. An import inside a function is allowed
only in `apps.py`, where an app connects its receivers once the models are loaded.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "jazzmine_web"


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        if "migrations" in path.parts:
            continue
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imported(node: ast.Import | ast.ImportFrom, name: str, path: Path, known: set[str]) -> set[str]:
    """Return the app's modules an import statement in module `name` runs."""
    targets: set[str] = set()
    if isinstance(node, ast.Import):
        candidates = [alias.name for alias in node.names]
    else:
        if node.level:
            base = name.split(".")
            if path.name != "__init__.py":
                base = base[:-1]
            base = base[: len(base) - (node.level - 1)]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        candidates = [module] + [f"{module}.{alias.name}" for alias in node.names]
    for candidate in candidates:
        if candidate in known:
            targets.add(candidate)
            # The packages above it run first, unless the importer is inside them already.
            parts = candidate.split(".")
            for cut in range(2, len(parts)):
                package = ".".join(parts[:cut])
                if package in known and not (name + ".").startswith(package + "."):
                    targets.add(package)
    targets.discard(name)
    return targets


def module_level(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    found = []
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for inner in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
            if isinstance(inner, (ast.Import, ast.ImportFrom)):
                found.append(inner)
    return found


def late_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found += [n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))]
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    names = set(known)
    edges = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text())
        edges[name] = set().union(
            *(imported(node, name, path, names) for node in module_level(tree))
        )
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Return the strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                group.append(other)
                if other == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_module_of_the_app_is_in_an_import_cycle() -> None:
    edges = graph()
    assert len(edges) > 100  # the whole app was read
    assert cycles(edges) == []


def test_the_reading_finds_a_cycle_where_there_is_one() -> None:
    edges = graph()
    # What the review services did before their webhooks listened to a signal instead.
    edges["jazzmine_web.reviews.services.submitting"].add("jazzmine_web.reviews.webhooks")
    pair = {"jazzmine_web.reviews.services.submitting", "jazzmine_web.reviews.webhooks"}
    assert any(pair <= set(group) for group in cycles(edges))


def test_only_an_apps_ready_imports_the_app_late() -> None:
    known = modules()
    names = set(known)
    late = []
    for name, path in known.items():
        if path.name == "apps.py":
            continue
        tree = ast.parse(path.read_text())
        for node in late_imports(tree):
            if imported(node, name, path, names):
                late.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert late == []
