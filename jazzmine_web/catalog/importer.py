"""Find `@tool` functions and sandbox profiles in Python files by parsing, never executing them."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from django.conf import settings

from jazzmine.core.tools import SandboxConfig, ToolParameter
from jazzmine.requirements import RequirementError, requirements_check

_TOOL_ARGS = ("description", "parameters", "dependencies", "secrets", "sandbox", "name")
_PARAM_ARGS = tuple(f.name for f in fields(ToolParameter))
_CONFIG_ARGS = tuple(f.name for f in fields(SandboxConfig))


@dataclass(frozen=True)
class ImportProblem:
    """Why a file cannot be imported: where, and what is wrong."""

    filename: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.filename}, line {self.line}" if self.line else self.filename
        return f"{where}: {self.message}"


class ImportRefused(Exception):
    """An import was refused; nothing was written. Holds every problem found."""

    def __init__(self, problems: Sequence[ImportProblem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclass(frozen=True)
class SourceFile:
    """A file to import: its name, its size, and its bytes (None when too big to read)."""

    name: str
    size: int
    data: bytes | None


def max_file_bytes() -> int:
    """Return the largest source file the importer reads."""
    return int(getattr(settings, "JAZZMINE_IMPORT_MAX_FILE_BYTES", 1024 * 1024))


def source_file_from_upload(upload: Any) -> SourceFile:
    """Wrap an uploaded file, reading it only when it is small enough."""
    size = int(upload.size or 0)
    data = upload.read() if size <= max_file_bytes() else None
    return SourceFile(name=Path(upload.name or "upload.py").name, size=size, data=data)


def source_file_from_path(path: Path) -> SourceFile:
    """Wrap a file on disk, reading it only when it is small enough."""
    size = path.stat().st_size
    return SourceFile(
        name=str(path), size=size, data=path.read_bytes() if size <= max_file_bytes() else None
    )


@dataclass(frozen=True)
class ParsedTool:
    """A tool found in a file, with plain literal values."""

    filename: str
    line: int
    name: str
    sandbox: str
    description: str
    parameters: list[dict[str, Any]]
    dependencies: list[str]
    secrets: list[str]
    source: str


@dataclass(frozen=True)
class ParsedConfig:
    """A `register_sandbox(SandboxConfig(...))` call found in a file."""

    filename: str
    line: int
    name: str
    values: dict[str, Any]

    @property
    def where(self) -> tuple[str, int]:
        """Return the file and line of the call."""
        return (self.filename, self.line)


@dataclass
class ParsedImport:
    """Everything found in a batch of files."""

    tools: list[ParsedTool] = field(default_factory=list)
    configs: dict[str, ParsedConfig] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def sandbox_names(self) -> list[str]:
        """Return the sandboxes the tools go to, and those only configured, sorted."""
        return sorted({t.sandbox for t in self.tools} | set(self.configs))

    def first_tool_where(self, sandbox: str) -> tuple[str, int | None]:
        """Return where the first tool of a sandbox was found."""
        for item in self.tools:
            if item.sandbox == sandbox:
                return (item.filename, item.line)
        return ("?", None)


class _NotLiteral(Exception):
    def __init__(self, node: ast.AST, why: str = "", *, misuse: bool = False) -> None:
        self.node = node
        self.why = why
        # A misuse (unknown or repeated argument) is about the call, not about a value.
        self.misuse = misuse


def _callee_name(func: ast.expr) -> str | None:
    """Return `x` for `x(...)` and `y` for `a.b.y(...)`."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _literal(node: ast.expr) -> Any:
    """Evaluate a literal expression; `ToolParameter(...)` with literal arguments is one too."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (bytes, complex)) or node.value is Ellipsis:
            raise _NotLiteral(node, "bytes, complex and ... are not JSON values")
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        result: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                raise _NotLiteral(value, "`**` unpacking is not a literal")
            result[_literal(key)] = _literal(value)
        return result
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, (int, float))
        and not isinstance(node.operand.value, bool)
    ):
        return -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value
    if isinstance(node, ast.Call) and _callee_name(node.func) == "ToolParameter":
        return _bind(node, _PARAM_ARGS, "ToolParameter")
    raise _NotLiteral(node)


def _bind(call: ast.Call, names: tuple[str, ...], what: str) -> dict[str, Any]:
    """Map a call's literal arguments onto parameter names, as Python would."""
    bound: dict[str, Any] = {}
    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            raise _NotLiteral(arg, "`*` unpacking is not a literal")
        if index >= len(names):
            raise _NotLiteral(
                arg, f"{what}() takes at most {len(names)} positional arguments", misuse=True
            )
        bound[names[index]] = _literal(arg)
    for keyword in call.keywords:
        if keyword.arg is None:
            raise _NotLiteral(keyword.value, "`**` unpacking is not a literal")
        if keyword.arg not in names:
            raise _NotLiteral(
                keyword.value,
                f"{what}() has no argument {keyword.arg!r} (it takes {', '.join(names)})",
                misuse=True,
            )
        if keyword.arg in bound:
            raise _NotLiteral(keyword.value, f"{what}() got {keyword.arg!r} twice", misuse=True)
        bound[keyword.arg] = _literal(keyword.value)
    return bound


def _code(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 80 else text[:77] + "..."


_COMPUTED = (ast.BinOp, ast.BoolOp, ast.UnaryOp, ast.Compare, ast.IfExp, ast.Subscript)
_TYPE_NAMES = frozenset({"str", "int", "float", "bool", "list", "dict", "object", "Any"})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _why_not_a_value(node: ast.AST) -> str:
    """Say what the node is and why the importer cannot take it, the way its author reads it."""
    unrun = "the importer reads the file without running it, so"
    if isinstance(node, ast.Name) and node.id in _TYPE_NAMES:
        return f"{node.id} is the Python type itself: write its name as a string, {node.id!r}"
    if isinstance(node, ast.Name):
        return f"{node.id!r} is a variable, and {unrun} it cannot look it up: write the value here"
    if isinstance(node, ast.Attribute):
        return f"it is an attribute, and {unrun} it cannot look it up: write the value here"
    if isinstance(node, ast.Call):
        callee = _callee_name(node.func) or "a function"
        return (
            f"it calls {callee}(), and {unrun} nothing is called: write the result here "
            "(only ToolParameter(...) may be written as a call)"
        )
    if isinstance(node, _COMPREHENSIONS):
        return f"it is a comprehension, and {unrun} it is never computed: write the items out"
    if isinstance(node, ast.JoinedStr):
        return f"it is an f-string, and {unrun} it is never formatted: write the plain string"
    if isinstance(node, ast.Starred):
        return (
            "`*` unpacks only when the file runs, and the importer never runs it: write the items"
        )
    if isinstance(node, ast.Set):
        return "a set is not a JSON value: write a list [...] instead"
    if isinstance(node, ast.Lambda):
        return "a lambda is a function, not a value"
    if isinstance(node, _COMPUTED):
        return f"it is an expression, and {unrun} it is never computed: write its value"
    return (
        "decorator arguments must be literals (strings, numbers, lists, dicts, ToolParameter(...) "
        "with literal arguments), because the file is never executed"
    )


def _where(value: ast.AST, target: ast.AST) -> list[str]:
    """Return the steps from an argument's value down to `target` (items, keys, arguments)."""
    if value is target:
        return []
    children: list[tuple[str, ast.AST]] = []
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        children = [(f"item {i + 1}", e) for i, e in enumerate(value.elts)]
    elif isinstance(value, ast.Dict):
        for key, item in zip(value.keys, value.values, strict=True):
            label = f"key {key.value!r}" if isinstance(key, ast.Constant) else "a key"
            if key is not None:
                children.append((label, key))
            children.append((label, item))
    elif isinstance(value, ast.Call):
        name = _callee_name(value.func) or "call"
        first = value.args[0] if value.args else None
        head = f"{first.value!r}, " if isinstance(first, ast.Constant) else ""
        children = [(f"{name}(argument {i + 1})", a) for i, a in enumerate(value.args)]
        children += [(f"{name}({head}{k.arg or '**'}=…)", k.value) for k in value.keywords]
    for label, child in children:
        if any(n is target for n in ast.walk(child)):
            return [label, *_where(child, target)]
    return []


def _bind_or_problem(
    call: ast.Call,
    names: tuple[str, ...],
    what: str,
    *,
    filename: str,
    line: int,
    label: str,
    problems: list[ImportProblem],
) -> dict[str, Any] | None:
    """Return `_bind`'s arguments, or None once the problem of a value that is not a literal
    is recorded: on the value's line (`line` when it has none), headed by `label`."""
    try:
        return _bind(call, names, what)
    except _NotLiteral as exc:
        argument = _argument_name(call, exc.node, names)
        reason = _describe(exc, argument, _argument_value(call, exc.node))
        problems.append(
            ImportProblem(filename, getattr(exc.node, "lineno", line), f"{label}: {reason}")
        )
        return None


def _describe(exc: _NotLiteral, argument: str, value: ast.AST | None = None) -> str:
    """Return the real reason an argument was refused, and where inside it."""
    steps = _where(value, exc.node) if value is not None else []
    if exc.misuse:
        # The last step names the misused argument itself, which the reason names already.
        inside = steps[:-1]
        return f"argument {argument!r} ({', '.join(inside)}): {exc.why}" if inside else exc.why
    why = exc.why or _why_not_a_value(exc.node)
    if not steps:
        return f"argument {argument!r} is not a literal: `{_code(exc.node)}`: {why}"
    # Inside a list, dict or ToolParameter(...): the container is fine, one value in it is not.
    where = ", ".join(steps)
    return f"argument {argument!r} ({where}): `{_code(exc.node)}` is not a literal value: {why}"


def _argument_value(call: ast.Call, node: ast.AST) -> ast.AST | None:
    """Return the value of the call argument that contains `node`."""
    for value in [*call.args, *(k.value for k in call.keywords)]:
        if any(child is node for child in ast.walk(value)):
            return value
    return None


def _argument_name(call: ast.Call, node: ast.AST, names: tuple[str, ...]) -> str:
    """Return the name of the call argument that contains `node`."""
    for index, arg in enumerate(call.args):
        if any(child is node for child in ast.walk(arg)):
            return names[index] if index < len(names) else f"#{index + 1}"
    for keyword in call.keywords:
        if any(child is node for child in ast.walk(keyword.value)):
            return keyword.arg or "**"
    return "?"


def _is_tool_decorator(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return _callee_name(target) == "tool"


def _check_list_of_str(value: Any, label: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{label} must be a list of strings")
    return list(value)


def _decode(item: SourceFile) -> tuple[str | None, ImportProblem | None]:
    """Return the file's text, or the problem that stops it from being read."""
    limit = max_file_bytes()
    if item.data is None or item.size > limit or len(item.data) > limit:
        return None, ImportProblem(
            item.name, None, f"file is {item.size:,} bytes; the limit is {limit:,} bytes"
        )
    if not item.name.endswith(".py"):
        return None, ImportProblem(item.name, None, "only .py files can be imported")
    if b"\x00" in item.data:
        return None, ImportProblem(item.name, None, "binary file (contains NUL bytes), not Python")
    try:
        text = item.data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = item.data[: exc.start].count(b"\n") + 1
        return None, ImportProblem(item.name, line, f"not UTF-8 text ({exc.reason})")
    # Python reads source with universal newlines; the core's checksums assume "\n".
    return text.replace("\r\n", "\n").replace("\r", "\n"), None


def parse_module(
    filename: str, text: str, *, target_sandbox: str | None = None
) -> tuple[list[ParsedTool], list[ParsedConfig], list[ImportProblem]]:
    """Return the tools and sandbox profiles of one module's text, and its problems."""
    try:
        tree = ast.parse(text, filename=filename)
    except SyntaxError as exc:
        return [], [], [ImportProblem(filename, exc.lineno, f"syntax error: {exc.msg}")]
    lines = text.splitlines()
    tools: list[ParsedTool] = []
    configs: list[ParsedConfig] = []
    problems: list[ImportProblem] = []

    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            call = node.value
            if _callee_name(call.func) != "register_sandbox":
                continue
            parsed = _parse_config(filename, call, problems)
            if parsed is not None:
                configs.append(parsed)
            continue
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        decorators = [d for d in node.decorator_list if _is_tool_decorator(d)]
        if not decorators:
            continue
        decorator = decorators[0]
        if not isinstance(decorator, ast.Call):
            problems.append(
                ImportProblem(
                    filename,
                    decorator.lineno,
                    f"@tool on {node.name}() needs arguments: at least description=...",
                )
            )
            continue
        args = _bind_or_problem(
            decorator,
            _TOOL_ARGS,
            "tool",
            filename=filename,
            line=decorator.lineno,
            label=f"@tool on {node.name}()",
            problems=problems,
        )
        if args is None:
            continue
        try:
            description = args.get("description")
            if not isinstance(description, str) or not description.strip():
                raise ValueError("has no description: the LLM reads it, so it is required")
            raw_params = args.get("parameters") or []
            if not isinstance(raw_params, list) or not all(isinstance(p, dict) for p in raw_params):
                raise ValueError("parameters must be a list of ToolParameter(...)")
            parameters = [ToolParameter(**p).to_dict() for p in raw_params]
            sandbox = args.get("sandbox") or "default"
            if not isinstance(sandbox, str):
                raise ValueError("sandbox must be a string")
            name = args.get("name") or node.name
            if not isinstance(name, str):
                raise ValueError("name must be a string")
            dependencies = _check_list_of_str(args.get("dependencies") or [], "dependencies")
            try:
                dependencies = requirements_check(dependencies)
            except RequirementError as exc:
                raise ValueError(f"dependencies {exc}") from None
            secrets = _check_list_of_str(args.get("secrets") or [], "secrets")
        except (TypeError, ValueError) as exc:
            problems.append(ImportProblem(filename, node.lineno, f"tool {node.name}(): {exc}"))
            continue
        # From `def` to the end: the decorators are left out, as the core's registry does.
        source = textwrap.dedent("\n".join(lines[node.lineno - 1 : node.end_lineno]) + "\n")
        tools.append(
            ParsedTool(
                filename=filename,
                line=node.lineno,
                name=name,
                sandbox=target_sandbox or sandbox,
                description=description,
                parameters=parameters,
                dependencies=dependencies,
                secrets=secrets,
                source=source,
            )
        )
    return tools, configs, problems


def _parse_config(
    filename: str, call: ast.Call, problems: list[ImportProblem]
) -> ParsedConfig | None:
    if len(call.args) != 1 or call.keywords:
        problems.append(
            ImportProblem(filename, call.lineno, "register_sandbox() takes one SandboxConfig(...)")
        )
        return None
    inner = call.args[0]
    if not isinstance(inner, ast.Call) or _callee_name(inner.func) != "SandboxConfig":
        problems.append(
            ImportProblem(
                filename,
                call.lineno,
                "register_sandbox() argument must be SandboxConfig(...) written out with literals",
            )
        )
        return None
    values = _bind_or_problem(
        inner,
        _CONFIG_ARGS,
        "SandboxConfig",
        filename=filename,
        line=call.lineno,
        label="SandboxConfig",
        problems=problems,
    )
    if values is None:
        return None
    try:
        if "dependencies" in values:
            try:
                values["dependencies"] = requirements_check(values["dependencies"] or [])
            except RequirementError as exc:
                raise ValueError(f"dependencies {exc}") from None
        config = SandboxConfig(**values)
    except (TypeError, ValueError) as exc:
        problems.append(ImportProblem(filename, call.lineno, f"SandboxConfig: {exc}"))
        return None
    given = {k: getattr(config, k) for k in values if k != "name"}
    return ParsedConfig(filename=filename, line=call.lineno, name=config.name, values=given)


def parse_files(files: Iterable[SourceFile], *, target_sandbox: str | None = None) -> ParsedImport:
    """Parse a batch of files; raise ImportRefused with every problem found, if any."""
    result = ParsedImport()
    problems: list[ImportProblem] = []
    seen: dict[tuple[str, str], ParsedTool] = {}
    files = list(files)
    if not files:
        raise ImportRefused([ImportProblem("(no file)", None, "choose at least one .py file")])
    for item in files:
        text, problem = _decode(item)
        if problem is not None:
            problems.append(problem)
            continue
        assert text is not None
        tools, configs, found = parse_module(item.name, text, target_sandbox=target_sandbox)
        problems.extend(found)
        for config in configs:
            if target_sandbox is not None and config.name != target_sandbox:
                result.notes.append(
                    f"{config.filename}, line {config.line}: profile of sandbox "
                    f"{config.name!r} ignored (importing into {target_sandbox!r})"
                )
                continue
            result.configs[config.name] = config
        for item_tool in tools:
            key = (item_tool.sandbox, item_tool.name)
            if key in seen:
                first = seen[key]
                problems.append(
                    ImportProblem(
                        item_tool.filename,
                        item_tool.line,
                        f"duplicate tool name {item_tool.name!r} in sandbox "
                        f"{item_tool.sandbox!r} (first defined in {first.filename}, "
                        f"line {first.line})",
                    )
                )
                continue
            seen[key] = item_tool
            result.tools.append(item_tool)
    if not problems and not result.tools and not result.configs:
        problems.append(
            ImportProblem(
                ", ".join(f.name for f in files), None, "no @tool functions or sandboxes found"
            )
        )
    if problems:
        raise ImportRefused(problems)
    return result
