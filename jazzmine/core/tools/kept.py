"""What of a tool's source is kept: its function alone. Code that would be left out is refused.

A tool reaches the sandbox as its function's own source (`RegisteredTool.source`): the image
holds each tool in a file of its own, which the harness runs when a run starts, giving it only
`ToolResponse` and `ToolParameter` (`harness.toolbox`). An import, a constant or a helper
written beside the function is in no such file, so a function that reads one saves, lints and
then fails with NameError at its first call. Such code is not kept and run before the function
instead: it would run as the tools load, for every run of the sandbox, before any call and
for tools the run may not call, outside each call's directory and secrets; and the code an
admin accepts, its digest and every page show the function alone.
"""

from __future__ import annotations

import ast
import symtable
from collections.abc import Iterator
from dataclasses import dataclass

# What the harness gives every tool's file besides the builtins (`ToolBox._load`).
HARNESS_NAMES = frozenset({"ToolResponse", "ToolParameter", "__name__", "__file__", "__builtins__"})

# Scopes of their own: what they bind is not the module's.
_OWN_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SHOWN_CHARS = 60


@dataclass(frozen=True)
class LeftOut:
    """A statement outside a tool's function that the tool would lose, and why it matters."""

    statement: ast.stmt
    function_name: str
    used: tuple[str, ...] = ()  # the names the function reads from it (a module's tools)

    @property
    def line(self) -> int:
        """Return the line the statement starts on."""
        return self.statement.lineno

    def sentence(self, text: str) -> str:
        """Say what the statement of `text` is, that it would not be kept, and what to do."""
        # Its lines as the parser counts them (a lone CR ends one too; a form feed does not).
        segment = ast.get_source_segment(text, self.statement) or ""
        shown = (segment.splitlines() or [""])[0].strip()
        if len(shown) > _SHOWN_CHARS or self.statement.end_lineno != self.statement.lineno:
            shown = shown[:_SHOWN_CHARS].rstrip() + " ..."
        uses = f", which uses {', '.join(self.used)}," if self.used else ""
        return (
            f"`{shown}` is outside the function {self.function_name}{uses} and would not be "
            f"kept: only the function's own code runs in the sandbox; {_advice(self.statement)}"
        )


def _advice(statement: ast.stmt) -> str:
    if isinstance(statement, ast.ImportFrom) and statement.module == "__future__":
        return "remove it (it cannot move inside a function)"
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return "move the import inside the function"
    if isinstance(statement, _DEFINITIONS):
        return f"define {statement.name} inside the function"
    return "move it inside the function, or remove it"


def _is_docstring(statement: ast.stmt) -> bool:
    # A string on a line of its own does nothing wherever it is: nothing is lost without it.
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def outside_code(
    tree: ast.Module, function: ast.FunctionDef | ast.AsyncFunctionDef
) -> LeftOut | None:
    """Return the first statement of a one-tool source that is not its function (None: none).

    Its decorators are the function's own node; comments and blank lines are no statements;
    docstrings do nothing. Anything else would be left out of what runs.
    """
    for statement in tree.body:
        if statement is not function and not _is_docstring(statement):
            return LeftOut(statement, function.name)
    return None


def module_code_used(
    tree: ast.Module, function: ast.FunctionDef | ast.AsyncFunctionDef, function_source: str
) -> list[LeftOut]:
    """Return the statements of a module, outside `function`, that the function reads names of.

    `function_source` is the function as it is kept (from its `def`, dedented). The rest of a
    module (the imports its decorators need, its registry) is the module's own and may stay;
    what the function itself reads from it would be lost. Raises SyntaxError for a source
    `compile` refuses (`def f(x, x)`), RecursionError for one too nested to read.
    """
    wanted = global_names(function_source) - HARNESS_NAMES - {function.name}
    used: dict[int, tuple[ast.stmt, list[str]]] = {}
    for name, statement in _module_bindings(tree).items():
        if name in wanted and statement is not function:
            used.setdefault(id(statement), (statement, []))[1].append(name)
    found = [LeftOut(s, function.name, tuple(sorted(names))) for s, names in used.values()]
    return sorted(found, key=lambda left: left.statement.lineno)


def global_names(function_source: str) -> set[str]:
    """Return the names a function's source reads from its module, as Python resolves them.

    Those its body (and what it nests) reads as globals, and those of its defaults and
    annotations, which are read where the function is defined.
    """
    names: set[str] = set()
    tables = [symtable.symtable(function_source, "<tool>", "exec")]
    while tables:
        table = tables.pop()
        names.update(s.get_name() for s in table.get_symbols() if s.is_global())
        tables.extend(table.get_children())
    return names


def _module_bindings(tree: ast.Module) -> dict[str, ast.stmt]:
    """Return each name the module's own scope binds, with the first statement binding it."""
    bound: dict[str, ast.stmt] = {}
    for statement in tree.body:
        for name, where in _bound_by(statement):
            bound.setdefault(name, where)
    return bound


def _bound_by(top: ast.stmt) -> Iterator[tuple[str, ast.stmt]]:
    # Iterative: a module of deeply nested code must not exhaust the stack here.
    stack: list[tuple[ast.AST, ast.stmt]] = [(top, top)]
    while stack:
        node, statement = stack.pop()
        if isinstance(node, ast.stmt):
            statement = node
        if isinstance(node, _DEFINITIONS):
            yield node.name, statement
            continue  # its body is its own scope
        if isinstance(node, _OWN_SCOPES):
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue  # binds no name the code reads
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    yield alias.asname or alias.name.split(".")[0], statement
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            yield node.id, statement
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            yield node.name, statement
        elif isinstance(node, ast.MatchMapping) and node.rest:
            yield node.rest, statement
        stack.extend((child, statement) for child in ast.iter_child_nodes(node))
