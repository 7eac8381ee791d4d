"""Walk a parsed script once and collect what breaks the rules: the validator's default-deny wall.

Every node is either in the allowed subset of Python (`allowed.FIELDS`, or one of the handlers
here) or reported; every name load, call, binding and attribute is checked against the tool
list's `allowed.Context`. A name the script may have bound itself is judged at the end, once
the whole script's bindings are known (see the package docstring for why that is sound).
"""

from __future__ import annotations

import ast
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any

from jazzmine.core.tools.safety import (
    FORBIDDEN_ATTRIBUTES,
    PREIMPORTED_MODULES,
    format_field_problem,
)

from . import messages
from .allowed import (
    CALL_ONLY,
    EMIT_COUNTED,
    EMIT_NAMES,
    FIELDS,
    FORBIDDEN_CALLS,
    GETATTR_DENIED,
    INERT,
    MODULE_NAMES,
    Context,
)

# How the walker hands children back to the stack from the per-node helpers.
_Push = Callable[[Any], None]
_Extend = Callable[[Iterable[Any]], None]


class Checker:
    """Walk one tree once and collect violations."""

    __slots__ = ("bound", "ctx", "emits", "pending_calls", "pending_loads", "violations")

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.violations: list[tuple[int, str]] = []
        self.bound: set[str] = set()
        self.pending_loads: list[ast.Name] = []
        self.pending_calls: list[ast.Name] = []
        self.emits = False

    def run(self, tree: ast.Module) -> list[str]:
        """Walk the tree, resolve deferred names, return sorted, unique messages."""
        self._walk(tree)
        self._resolve_pending()
        if not self.emits:
            self.violations.append((1, messages.UNPRODUCTIVE))
        seen: set[str] = set()
        out: list[str] = []
        # A stable sort: within a line, violations keep the order the walk found them in.
        for line, text in sorted(self.violations, key=lambda v: v[0]):
            message = messages.violation(line, text)
            if message not in seen:
                seen.add(message)
                out.append(message)
        return out

    def _add(self, node: ast.AST, text: str) -> None:
        """Record a violation at `node`'s line."""
        self.violations.append((getattr(node, "lineno", 1) or 1, text))

    # The hot loop. One explicit stack instead of NodeVisitor recursion: no RecursionError on
    # deep trees, and a type-identity dispatch costs far less than `visit_<name>` lookups.
    def _walk(self, tree: ast.AST) -> None:
        """Visit every node once."""
        ctx = self.ctx
        value_ok = ctx.value_ok
        value_special = ctx.value_special
        call_ok = ctx.call_ok
        reserved = ctx.reserved
        modules = MODULE_NAMES
        forbidden_attrs = FORBIDDEN_ATTRIBUTES
        fields = FIELDS
        bound_add = self.bound.add
        pending_loads = self.pending_loads.append
        pending_calls = self.pending_calls.append
        name_t, const_t, attr_t, call_t, load_t = (
            ast.Name,
            ast.Constant,
            ast.Attribute,
            ast.Call,
            ast.Load,
        )
        special = {
            ast.FunctionDef: self._function,
            ast.Lambda: self._lambda,
            ast.comprehension: self._comprehension,
            ast.ExceptHandler: self._handler,
            ast.Import: self._import,
            ast.ImportFrom: self._import,
            ast.AsyncFunctionDef: self._async_function,
            ast.ClassDef: self._class,
        }
        stack: list = [tree]
        pop = stack.pop
        push = stack.append
        extend = stack.extend
        while stack:
            node = pop()
            t = type(node)
            if t is name_t:
                nid = node.id
                if type(node.ctx) is load_t:
                    if nid in value_ok:
                        continue
                    if nid in value_special:
                        self._special_value(node)
                    else:
                        pending_loads(node)
                elif nid in reserved or nid[0] == "_":
                    self._bad_binding(node, nid)
                else:
                    bound_add(nid)
            elif t is const_t:
                continue
            elif t is attr_t:
                attr = node.attr
                if attr[0] == "_" or attr in forbidden_attrs or attr == "format":
                    self._bad_attribute(node, attr)
                if type(node.ctx) is not load_t:
                    self._add(node, messages.attribute_stored(attr))
                value = node.value
                if type(value) is name_t and value.id in modules:
                    self._module_attribute(node, value.id, attr)
                else:
                    push(value)
            elif t is call_t:
                func = node.func
                ft = type(func)
                if ft is name_t:
                    fid = func.id
                    if fid not in call_ok:
                        if fid in EMIT_COUNTED:
                            self.emits = True
                        elif fid in value_special:
                            self._special_call(node, fid)
                        else:
                            pending_calls(func)
                elif ft is attr_t:
                    attr = func.attr
                    value = func.value
                    if attr == "format":
                        self._format_call(func)
                        if type(value) is not const_t:
                            push(value)
                    else:
                        if attr[0] == "_" or attr in forbidden_attrs:
                            self._bad_attribute(func, attr)
                        if type(value) is name_t and value.id in modules:
                            self._module_attribute(func, value.id, attr)
                        else:
                            push(value)
                else:
                    push(func)
                extend(node.args)
                for keyword in node.keywords:
                    push(keyword.value)
            else:
                spec = fields.get(t)
                if spec is not None:
                    for field in spec[0]:
                        child = getattr(node, field)
                        if child is not None:
                            push(child)
                    for field in spec[1]:
                        extend(getattr(node, field))
                    continue
                handler = special.get(t)
                if handler is not None:
                    handler(node, push, extend)
                else:
                    self._unsupported(node, push)

    # --- names -------------------------------------------------------------------------------

    def _special_value(self, node: ast.Name) -> None:
        """Report a name used as a value that may only be called, or not used at all."""
        nid = node.id
        if nid in FORBIDDEN_CALLS:
            self._add(node, messages.forbidden_use(nid))
        elif nid in self.ctx.tools:
            self._add(node, messages.tool_not_called(nid))
        elif nid in EMIT_NAMES:
            self._add(node, messages.helper_not_called(nid))
        elif nid in MODULE_NAMES:
            self._add(node, messages.module_value(nid))
        else:  # CALL_ONLY
            self._add(node, messages.call_only_value(nid))

    def _special_call(self, node: ast.Call, fid: str) -> None:
        """Check a call to a forbidden, call-only or module name."""
        if fid in FORBIDDEN_CALLS:
            self._add(node, messages.forbidden_call(fid))
        elif fid in CALL_ONLY:
            self._call_only(node, fid)
        elif fid in MODULE_NAMES:
            self._add(node, messages.module_value(fid))
        else:  # an emit helper or a tool listed in both `value_special` and `call_ok`
            pass

    def _call_only(self, node: ast.Call, fid: str) -> None:
        """Allow `getattr`/`hasattr` with a literal safe name and one-argument `type`."""
        args = node.args
        starred = any(type(a) is ast.Starred for a in args)
        if fid == "type":
            if len(args) != 1 or node.keywords or starred:
                self._add(node, messages.TYPE_ARITY)
            return
        most = 3 if fid == "getattr" else 2
        if node.keywords or starred or not 2 <= len(args) <= most:
            self._add(node, messages.call_only_shape(fid))
            return
        name = args[1]
        if type(name) is not ast.Constant or type(name.value) is not str:
            self._add(node, messages.call_only_computed(fid))
            return
        # The parser NFKC-normalises identifiers but not string literals; normalise here so
        # a look-alike spelling cannot pass this check as something other than what it is.
        attr = unicodedata.normalize("NFKC", name.value)
        if not attr or attr[0] == "_" or attr in GETATTR_DENIED:
            self._add(node, messages.call_only_denied(fid, name.value))

    def _bind(self, node: ast.AST, name: str) -> None:
        """Record a name the script binds, or report it if it may not be bound.

        `_walk` inlines this for plain `Name` targets, the hot case.
        """
        if name in self.ctx.reserved or name[0] == "_":
            self._bad_binding(node, name)
        else:
            self.bound.add(name)

    def _bad_binding(self, node: ast.AST, name: str) -> None:
        """Report binding a reserved or underscore-prefixed name (a bare `_` is fine)."""
        if name == "_":
            self.bound.add(name)
            return
        ctx = self.ctx
        if name in ctx.tools:
            text = messages.tool_bound(name)
        elif name in EMIT_NAMES:
            text = messages.helper_bound(name)
        elif name in MODULE_NAMES:
            text = messages.module_bound(name)
        elif name in ctx.reserved:
            text = messages.builtin_bound(name)
        else:
            text = messages.underscore_bound(name)
        self._add(node, text)

    def _resolve_pending(self) -> None:
        """Decide the names whose verdict depended on what the whole script binds."""
        bound = self.bound
        for nodes, undefined in (
            (self.pending_loads, messages.undefined_name),
            (self.pending_calls, messages.undefined_call),
        ):
            for node in nodes:
                nid = node.id
                if nid[0] == "_" and nid != "_":
                    self._add(node, messages.underscore_name(nid))
                elif nid not in bound:
                    self._add(node, undefined(nid))

    # --- attributes --------------------------------------------------------------------------

    def _bad_attribute(self, node: ast.Attribute, attr: str) -> None:
        """Report an underscore, internal or unchecked-format attribute."""
        if attr in ("format", "format_map"):
            self._add(node, messages.UNCHECKED_FORMAT)
        elif attr[0] == "_":
            self._add(node, messages.underscore_attribute(attr))
        else:
            self._add(node, messages.forbidden_attribute(attr))

    def _module_attribute(self, node: ast.Attribute, module: str, attr: str) -> None:
        """Allow only the listed public attributes of a pre-imported module."""
        allowed = PREIMPORTED_MODULES[module]
        if attr not in allowed:
            self._add(node, messages.module_attribute(module, attr, allowed))

    def _format_call(self, func: ast.Attribute) -> None:
        """Allow `'literal'.format(...)` only when every field is a plain name or index."""
        value = func.value
        if type(value) is not ast.Constant or type(value.value) is not str:
            self._bad_attribute(func, "format")
            return
        problem = format_field_problem(value.value)
        if problem is not None:
            self._add(func, messages.format_field(problem))

    # --- statements and scopes ---------------------------------------------------------------

    def _function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, push: _Push, extend: _Extend
    ) -> None:
        """Check a def: its name, decorators, parameters, annotations and body."""
        self._bind(node, node.name)
        if node.decorator_list:
            self._add(node.decorator_list[0], messages.DECORATOR)
            extend(node.decorator_list)
        self._arguments(node.args, push, extend)
        if node.returns is not None:
            push(node.returns)
        extend(node.body)

    def _async_function(self, node: ast.AsyncFunctionDef, push: _Push, extend: _Extend) -> None:
        """Refuse an async def, then check it like a def to report what else is wrong."""
        self._add(node, messages.unsupported(ast.AsyncFunctionDef))
        self._function(node, push, extend)

    def _class(self, node: ast.ClassDef, push: _Push, extend: _Extend) -> None:
        """Refuse a class, then check what it contains."""
        self._add(node, messages.unsupported(ast.ClassDef))
        self._bind(node, node.name)
        extend(node.decorator_list)
        extend(node.bases)
        extend(node.keywords)
        extend(node.body)

    def _lambda(self, node: ast.Lambda, push: _Push, extend: _Extend) -> None:
        """Check a lambda's parameters and body."""
        self._arguments(node.args, push, extend)
        push(node.body)

    def _arguments(self, args: ast.arguments, push: _Push, extend: _Extend) -> None:
        """Bind parameter names and queue defaults and annotations."""
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        if args.vararg is not None:
            params.append(args.vararg)
        if args.kwarg is not None:
            params.append(args.kwarg)
        for param in params:
            self._bind(param, param.arg)
            if param.annotation is not None:
                push(param.annotation)
        extend(args.defaults)
        extend(args.kw_defaults)

    def _comprehension(self, node: ast.comprehension, push: _Push, extend: _Extend) -> None:
        """Check one `for ... in ... if ...` clause of a comprehension."""
        if node.is_async:
            self._add(node.target, messages.ASYNC_COMPREHENSION)
        push(node.target)
        push(node.iter)
        extend(node.ifs)

    def _handler(self, node: ast.ExceptHandler, push: _Push, extend: _Extend) -> None:
        """Check an except clause, including the name it binds."""
        if node.name is not None:
            self._bind(node, node.name)
        if node.type is not None:
            push(node.type)
        extend(node.body)

    def _import(self, node: ast.Import | ast.ImportFrom, push: _Push, extend: _Extend) -> None:
        """Refuse every import; nothing inside one needs checking."""
        self._add(node, messages.IMPORT)

    def _unsupported(self, node: ast.AST, push: _Push) -> None:
        """Report syntax outside the allowed subset, then keep checking what it contains."""
        t = type(node)
        if isinstance(node, INERT):
            return
        if isinstance(node, ast.stmt | ast.expr):
            self._add(node, messages.unsupported(t))
        if t is ast.Match:
            # Patterns are not expressions (a class pattern reads attributes by keyword); the
            # statement is already refused, so only look inside the subject and the bodies.
            push(node.subject)
            for case in node.cases:
                # Bind the capture names so the bodies are not reported as using undefined
                # names on top of the one violation that matters.
                for pattern in ast.walk(case.pattern):
                    captured = getattr(pattern, "name", None) or getattr(pattern, "rest", None)
                    if isinstance(captured, str):
                        self.bound.add(captured)
                if case.guard is not None:
                    push(case.guard)
                for stmt in case.body:
                    push(stmt)
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.withitem):
                push(child.context_expr)
                if child.optional_vars is not None:
                    push(child.optional_vars)
            elif not isinstance(child, ast.alias | ast.pattern | ast.match_case):
                push(child)
