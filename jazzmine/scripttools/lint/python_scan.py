"""Static reading of a Python script: one walk over its tree notes what it does, then the notes
are put together once it is known which names hold the arguments."""

from __future__ import annotations

import ast
from typing import Any, NamedTuple

from .scan import ScriptScan

_KEY_ERRORS = ("KeyError", "Exception", "LookupError")
_EXITS = ("sys.exit", "exit", "os._exit", "SystemExit")


def scan_python(source: str) -> ScriptScan:
    """Read stdin use, outputs, exits, defaults, guards and imports from a Python source."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return ScriptScan(
            runtime="python3", error=f"script.py does not parse (line {exc.lineno}: {exc.msg})"
        )
    except (RecursionError, MemoryError, ValueError):
        # Valid but extreme code (`1+1+...` 200 000 times) makes CPython's parser give up with
        # these; the tool page lints on every view, so a crash here made the page a 500.
        return ScriptScan(runtime="python3", error="script.py is too deeply nested to read")
    reader = _Reader()
    for node in ast.walk(tree):
        reader.visit(node)
    return reader.finish()


def _dotted(node: ast.AST | None) -> str:
    """Return `a.b.c` for a Name/Attribute chain, else ''."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _is_call(node: ast.AST, *names: str) -> bool:
    """Tell whether a node calls one of the dotted names."""
    return isinstance(node, ast.Call) and _dotted(node.func) in names


def _get_owner(node: ast.AST) -> str | None:
    """Return `x` for a call `x.get(...)` on a plain name, else None."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and isinstance(node.func.value, ast.Name)
    ):
        return node.func.value.id
    return None


def _str_constant(node: ast.AST) -> str | None:
    """Return the text of a string constant, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _param_key(node: ast.AST, args_vars: set[str]) -> str | None:
    """Return the parameter name read by `args.get("x")` or `args["x"]`, else None."""
    if isinstance(node, ast.Call) and _get_owner(node) in args_vars and node.args:
        return _str_constant(node.args[0])
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id in args_vars
    ):
        return _str_constant(node.slice)
    return None


class _Assignment(NamedTuple):
    """A plain `name = value` statement and every node of its value, breadth first."""

    targets: list[str]
    value: ast.expr
    nodes: list[ast.AST]


class _DefaultRead(NamedTuple):
    """`owner.get(key)` (fallback None), `owner.get(key, fallback)` or `owner.get(key) or fallback`."""

    owner: str
    key: Any
    fallback: ast.expr | None


class _Reader(ast.NodeVisitor):
    """Note what a script does, visiting each node once in `ast.walk`'s breadth-first order.

    That order is the one the checklist has always read in: when two reads give a parameter
    different defaults, the later one in it wins.
    """

    def __init__(self) -> None:
        self.scan = ScriptScan(runtime="python3")
        self.constants: dict[str, ast.expr] = {}
        self.assignments: list[_Assignment] = []
        self.json_reads: list[ast.Call] = []
        self.default_reads: list[_DefaultRead] = []
        self.memberships: list[tuple[str, list[str]]] = []
        self.try_subscripts: list[ast.Subscript] = []
        self.tests: list[ast.expr] = []

    def generic_visit(self, node: ast.AST) -> None:
        """Leave the children alone: the caller's `ast.walk` reaches each of them once."""

    # Notes taken on the walk

    def visit_Module(self, node: ast.Module) -> None:
        """Note module-level constants, which a default may name."""
        for statement in node.body:
            if isinstance(statement, ast.Assign):
                for target in statement.targets:
                    if isinstance(target, ast.Name):
                        self.constants[target.id] = statement.value

    def visit_Assign(self, node: ast.Assign) -> None:
        """Note a plain assignment: it may keep stdin, the arguments or one parameter."""
        targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        self.assignments.append(_Assignment(targets, node.value, list(ast.walk(node.value))))

    def visit_Call(self, node: ast.Call) -> None:
        """Note JSON parsing, `x.get(key[, default])` reads, outputs and exits."""
        name = _dotted(node.func)
        if name in ("json.loads", "json.load"):
            self.json_reads.append(node)
        owner = _get_owner(node)
        key = _str_constant(node.args[0]) if node.args else None
        if owner is not None and key is not None:
            fallback = node.args[1] if len(node.args) > 1 else None
            self.default_reads.append(_DefaultRead(owner, key, fallback))
        self._note_output(name, node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        """Note `x.get(key) or fallback`, a default written after the read."""
        if not isinstance(node.op, ast.Or) or len(node.values) != 2:
            return
        first, fallback = node.values
        owner = _get_owner(first)
        if (
            owner is not None
            and isinstance(first, ast.Call)
            and len(first.args) == 1
            and isinstance(first.args[0], ast.Constant)
        ):
            self.default_reads.append(_DefaultRead(owner, first.args[0].value, fallback))

    def visit_Compare(self, node: ast.Compare) -> None:
        """Note `"key" in x` and `"key" not in x`, a guard once x holds the arguments."""
        key = _str_constant(node.left)
        if key is not None and any(isinstance(o, (ast.In, ast.NotIn)) for o in node.ops):
            names = [c.id for c in node.comparators if isinstance(c, ast.Name)]
            self.memberships.append((key, names))

    def visit_Try(self, node: ast.Try) -> None:
        """Note the subscripts of a try body that catches a missing key: guarded reads."""
        if any(_dotted(h.type) in _KEY_ERRORS for h in node.handlers if h.type):
            self.try_subscripts.extend(
                sub
                for stmt in node.body
                for sub in ast.walk(stmt)
                if isinstance(sub, ast.Subscript)
            )

    def visit_If(self, node: ast.If) -> None:
        """Note a test, whose names may guard parameters."""
        self.tests.append(node.test)

    visit_IfExp = visit_While = visit_Assert = visit_If

    def visit_Import(self, node: ast.Import) -> None:
        """Note the first line each top-level module is imported on."""
        for alias in node.names:
            self.scan.imports.setdefault(alias.name.split(".")[0], node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        """Note an absolute `from` import's top-level module; relative ones are the tool's own."""
        if node.module and not node.level:
            self.scan.imports.setdefault(node.module.split(".")[0], node.lineno)

    def _note_output(self, name: str, node: ast.Call) -> None:
        """Sort a call into JSON output, debug output, an error message or an error exit."""
        scan, line = self.scan, node.lineno
        match name:
            case "print":
                _print_stream(node, scan).append(line)
            case "sys.stdout.write":
                is_json = bool(node.args) and _is_call(node.args[0], "json.dumps")
                (scan.json_outputs if is_json else scan.debug_outputs).append(line)
            case "json.dump":
                if len(node.args) > 1 and _dotted(node.args[1]) == "sys.stdout":
                    scan.json_outputs.append(line)
            case "sys.stderr.write":
                scan.stderr_writes.append(line)
            case _ if name in _EXITS and _exits_with_error(node):
                scan.error_exits.append(line)

    # Putting the notes together

    def finish(self) -> ScriptScan:
        """Resolve the names that hold the arguments, then the defaults and guards they give."""
        args_vars = self._stdin_args_vars() or self._any_json_vars()
        self._resolve_defaults(args_vars)
        self._resolve_guards(args_vars)
        return self.scan

    def _stdin_args_vars(self) -> set[str]:
        """Return the names assigned JSON read from stdin, noting whether any is read at all."""
        stdin_vars = {t for a in self.assignments if _keeps_stdin_text(a) for t in a.targets}
        stdin_json = {c for c in self.json_reads if _is_stdin_json(c, stdin_vars)}
        self.scan.reads_stdin = bool(stdin_json)
        return {t for a in self.assignments if stdin_json.intersection(a.nodes) for t in a.targets}

    def _any_json_vars(self) -> set[str]:
        """Return the names assigned any parsed JSON.

        Arguments read some other way (argv, a file) are still found, so that the default and
        guard items judge the script on their own and only stdin_contract fails.
        """
        json_reads = set(self.json_reads)
        return {t for a in self.assignments if json_reads.intersection(a.nodes) for t in a.targets}

    def _resolve_defaults(self, args_vars: set[str]) -> None:
        """Replay the reads of the arguments, in walk order, into the script's defaults."""
        for read in self.default_reads:
            if read.owner not in args_vars:
                continue
            if read.fallback is None:
                self.scan.defaults.setdefault(read.key, ("none", None))
            else:
                self.scan.defaults[read.key] = self._literal(read.fallback)

    def _literal(self, node: ast.expr) -> tuple[str, Any]:
        """Evaluate a default written as a literal or a module constant, else call it unknown."""
        if isinstance(node, ast.Name) and node.id in self.constants:
            node = self.constants[node.id]
        try:
            return "literal", ast.literal_eval(node)
        except (ValueError, TypeError, RecursionError, MemoryError):
            # TypeError: a literal Python cannot build (`{[1]: 2}`, an unhashable key).
            return "unknown", None

    def _resolve_guards(self, args_vars: set[str]) -> None:
        """Add every parameter the script tests for, catches the absence of, or checks with `in`."""
        guarded = self.scan.guarded
        guarded.update(key for key, names in self.memberships if set(names) & args_vars)
        for sub in self.try_subscripts:
            key = _param_key(sub, args_vars)
            if key is not None:
                guarded.add(key)
        param_vars = self._param_vars(args_vars)
        for test in self.tests:
            guarded.update(_tested_params(test, args_vars, param_vars))

    def _param_vars(self, args_vars: set[str]) -> dict[str, str]:
        """Map each name assigned from a parameter read (`x = args.get("x")`) to the parameter."""
        param_vars: dict[str, str] = {}
        for assignment in self.assignments:
            for sub in assignment.nodes:
                key = _param_key(sub, args_vars)
                if key is not None:
                    param_vars.update(dict.fromkeys(assignment.targets, key))
        return param_vars


def _keeps_stdin_text(assignment: _Assignment) -> bool:
    """Tell whether an assignment keeps the text of stdin: `raw = sys.stdin.read() [or ...]`."""
    if _is_call(assignment.value, "sys.stdin.read"):
        return True
    return isinstance(assignment.value, ast.BoolOp) and any(
        _is_call(n, "sys.stdin.read") for n in assignment.nodes
    )


def _is_stdin_json(call: ast.Call, stdin_vars: set[str]) -> bool:
    """Tell whether a json.load(s) call parses stdin, directly or through a name holding it."""
    if not call.args:
        return False
    if _dotted(call.func) == "json.load":
        return _dotted(call.args[0]) == "sys.stdin"
    return any(
        _is_call(n, "sys.stdin.read", "sys.stdin.readline")
        or (isinstance(n, ast.Name) and n.id in stdin_vars)
        for n in ast.walk(call.args[0])
    )


def _print_stream(node: ast.Call, scan: ScriptScan) -> list[int]:
    """Return the list a print call belongs to: stderr, JSON on stdout, or debug output."""
    target = next((k.value for k in node.keywords if k.arg == "file"), None)
    if target is not None and _dotted(target) == "sys.stderr":
        return scan.stderr_writes
    if node.args and _is_call(node.args[0], "json.dumps"):
        return scan.json_outputs
    return scan.debug_outputs


def _exits_with_error(node: ast.Call) -> bool:
    """Tell whether an exit call passes a code other than a literal 0 or None."""
    code = node.args[0] if node.args else None
    return code is not None and not (isinstance(code, ast.Constant) and code.value in (0, None))


def _tested_params(test: ast.expr, args_vars: set[str], param_vars: dict[str, str]) -> set[str]:
    """Return the parameters a test looks at, directly or through a name holding one."""
    tested = set()
    for sub in ast.walk(test):
        if isinstance(sub, ast.Name) and sub.id in param_vars:
            tested.add(param_vars[sub.id])
        key = _param_key(sub, args_vars)
        if key is not None:
            tested.add(key)
    return tested
