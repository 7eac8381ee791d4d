"""The second wall's attribute checks: the Guards a rewritten script calls, and the rewriter."""

from __future__ import annotations

import ast
import types
from collections.abc import Callable
from typing import Any

from .refs import _real_getattr

# Names the rewritten script calls; a script may not mention (and so never rebind) them.
GUARD_PREFIX = "__jazzmine_"
GUARD_GET = "__jazzmine_getattr__"
GUARD_SET = "__jazzmine_setattr__"
GUARD_DEL = "__jazzmine_delattr__"

# Objects whose every attribute is interpreter machinery: reading anything from them is the
# step of an escape after the first (frames, code, tracebacks, generator internals, raw
# modules, function and method objects). Scripts only ever call these, never read from them.
_OPAQUE_TYPES: tuple[type, ...] = (
    types.FrameType, types.CodeType, types.TracebackType, types.GeneratorType,
    types.CoroutineType, types.AsyncGeneratorType, types.ModuleType, types.FunctionType,
    types.BuiltinFunctionType, types.MethodType, types.CellType, types.MappingProxyType,
    types.MethodWrapperType, types.WrapperDescriptorType, types.MethodDescriptorType,
    types.ClassMethodDescriptorType, types.GetSetDescriptorType, types.MemberDescriptorType,
)  # fmt: skip


class SandboxViolation(RuntimeError):
    """The script did something the sandbox refuses at run time."""


def _checked_template(template: Any, format_problem: Callable[[str], str | None]) -> Any:
    if isinstance(template, str):
        problem = format_problem(template)
        if problem is not None:
            raise SandboxViolation(
                f"the format field {{{problem}}} reaches into attributes or items, which the "
                "sandbox refuses; use plain fields like {} or {name}, or an f-string"
            )
    return template


class Guards:
    """The checked accessors the rewritten script calls instead of plain attribute syntax."""

    def __init__(
        self, forbidden: frozenset[str], format_problem: Callable[[str], str | None]
    ) -> None:
        self.forbidden = forbidden
        self.format_problem = format_problem  # safety.format_field_problem, as the validator

    def name(self, name: Any) -> str:
        """Return an attribute name a script may use, or raise."""
        if type(name) is not str:
            raise TypeError("attribute name must be a string")
        if not name or name[0] == "_" or name in self.forbidden:
            raise SandboxViolation(f"attribute {name!r} is not available in the sandbox")
        return name

    def object(self, obj: Any, name: str) -> None:
        """Refuse every attribute of interpreter machinery."""
        if isinstance(obj, _OPAQUE_TYPES):
            raise SandboxViolation(
                f"attribute {name!r} of a {type(obj).__name__} object is not available in the "
                "sandbox"
            )

    def get(self, obj: Any, name: Any, *default: Any) -> Any:
        """Read `obj.name` after checking the name and the object."""
        name = self.name(name)
        self.object(obj, name)
        if name == "format":
            return self._format(obj)
        return _real_getattr(obj, name, *default)

    def has(self, obj: Any, name: Any) -> bool:
        """Answer hasattr() without ever reaching what get() refuses."""
        try:
            self.get(obj, name)
        except (AttributeError, SandboxViolation, TypeError):
            return False
        return True

    def set(self, obj: Any, name: Any, value: Any) -> None:
        """Assign `obj.name = value` after the same checks; never on classes."""
        name = self.name(name)
        self.object(obj, name)
        if isinstance(obj, type):
            raise SandboxViolation(f"assigning {name!r} on a class is not allowed in the sandbox")
        setattr(obj, name, value)

    def delete(self, obj: Any, name: Any) -> None:
        """Delete `obj.name` after the same checks; never on classes."""
        name = self.name(name)
        self.object(obj, name)
        if isinstance(obj, type):
            raise SandboxViolation(f"deleting {name!r} on a class is not allowed in the sandbox")
        delattr(obj, name)

    def _format(self, obj: Any) -> Any:
        """Hand out str.format with its template checked: fields may not reach attributes."""
        if isinstance(obj, str):
            bound = obj.format
            template = str(obj)

            def checked(*args: Any, **kwargs: Any) -> str:
                _checked_template(template, self.format_problem)
                return bound(*args, **kwargs)

            return checked
        if isinstance(obj, type) and issubclass(obj, str):

            def unbound(template: Any, *args: Any, **kwargs: Any) -> str:
                return str.format(_checked_template(template, self.format_problem), *args, **kwargs)

            return unbound
        raise SandboxViolation("'.format' is only available on strings in the sandbox")


class Rewriter(ast.NodeTransformer):
    """Route every attribute read, write and delete of a script through the Guards."""

    def __init__(self) -> None:
        self.problems: list[tuple[int, str]] = []

    def check_names(self, tree: ast.AST) -> None:
        """Refuse any identifier in the guards' namespace: the script must not rebind them.

        `__builtins__` names the dict the guards are looked up in: through it a script could
        swap a guard (`__builtins__['__jazzmine_getattr__'] = ...`) without naming one.
        """
        for node in ast.walk(tree):
            for field, value in ast.iter_fields(node):
                if isinstance(node, ast.Constant) or field == "attr":
                    continue
                names = value if isinstance(value, list) else [value]
                for name in names:
                    if isinstance(name, str) and (
                        name.startswith(GUARD_PREFIX) or name == "__builtins__"
                    ):
                        self._problem(node, f"the name {name!r} is reserved by the sandbox")

    def _problem(self, node: ast.AST, text: str) -> None:
        self.problems.append((getattr(node, "lineno", 1) or 1, text))

    @staticmethod
    def _call(guard: str, node: ast.AST, *args: ast.expr) -> ast.Call:
        call = ast.Call(func=ast.Name(id=guard, ctx=ast.Load()), args=list(args), keywords=[])
        return ast.copy_location(call, node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        """Turn `x.name` into a checked read; stores and deletes are handled per statement."""
        value = self.visit(node.value)
        if not isinstance(node.ctx, ast.Load):
            self._problem(
                node,
                "assigning or deleting an attribute is only supported as a plain statement "
                "(`obj.x = value`, `del obj.x`); use a variable or a dict key",
            )
            node.value = value
            return node
        return self._call(GUARD_GET, node, value, ast.Constant(node.attr))

    def visit_Match(self, node: ast.Match) -> ast.AST:
        """Refuse `match`: a class pattern (`case K(__globals__=g)`) reads attributes unchecked."""
        self._problem(node, "match statements are not supported in the sandbox; use if/elif")
        return node

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> ast.AST:
        """Refuse imports: `from m import name` reads `name` from the real module unchecked."""
        self._problem(
            node,
            "imports are not allowed in the sandbox: json, time, math, re and datetime are "
            "already available",
        )
        return node

    visit_ImportFrom = visit_Import

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        """Turn `x.name = value` into a checked write."""
        target = node.targets[0]
        if len(node.targets) == 1 and isinstance(target, ast.Attribute):
            call = self._call(
                GUARD_SET,
                node,
                self.visit(target.value),
                ast.Constant(target.attr),
                self.visit(node.value),
            )
            return ast.copy_location(ast.Expr(call), node)
        return self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> Any:
        """Turn `del x.name` into a checked delete."""
        out: list[ast.stmt] = []
        for target in node.targets:
            if isinstance(target, ast.Attribute):
                call = self._call(
                    GUARD_DEL, target, self.visit(target.value), ast.Constant(target.attr)
                )
                out.append(ast.copy_location(ast.Expr(call), node))
            else:
                out.append(ast.copy_location(ast.Delete(targets=[self.visit(target)]), node))
        return out


def rewrite(tree: ast.Module) -> tuple[ast.Module, list[tuple[int, str]]]:
    """Return the guarded tree and the problems that make it unrunnable."""
    rewriter = Rewriter()
    rewriter.check_names(tree)
    guarded = ast.fix_missing_locations(rewriter.visit(tree))
    return guarded, rewriter.problems
