"""Find `@tool` functions and `register_sandbox(SandboxConfig(...))` calls in a batch of files."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any

from jazzmine.core.tools import SandboxConfig, ToolParameter
from jazzmine.core.tools.kept import module_code_used
from jazzmine.requirements import RequirementError, requirements_check

from .literals import callee_name
from .problems import ImportProblem, ImportRefused
from .reasons import bind_or_problem
from .sources import SourceFile, decode_source

_TOOL_ARGS = ("description", "parameters", "dependencies", "secrets", "sandbox", "name")
_CONFIG_ARGS = tuple(f.name for f in fields(SandboxConfig))


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


def _is_tool_decorator(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return callee_name(target) == "tool"


def _check_list_of_str(value: Any, label: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{label} must be a list of strings")
    return list(value)


def parse_module(
    filename: str, text: str, *, target_sandbox: str | None = None
) -> tuple[list[ParsedTool], list[ParsedConfig], list[ImportProblem]]:
    """Return the tools and sandbox profiles of one module's text, and its problems."""
    try:
        tree = ast.parse(text, filename=filename)
    except SyntaxError as exc:
        return [], [], [ImportProblem(filename, exc.lineno, f"syntax error: {exc.msg}")]
    except (RecursionError, MemoryError, ValueError):
        # CPython's parser gives up on valid but extreme code (`1+1+...` 200 000 times, a long
        # `a.b.b...` chain, `not not ... 1`) with these instead of SyntaxError.
        return [], [], [ImportProblem(filename, None, "too deeply nested to read")]
    # Lines as the parser counts them (`decode_source` made every break "\n"): `splitlines`
    # also breaks at form feeds, vertical tabs, \x1c-\x1e, \x85 and U+2028/9, so one of them
    # above a tool cut it lines off where its `def` is not, and hid itself from the checks.
    lines = text.split("\n")
    tools: list[ParsedTool] = []
    configs: list[ParsedConfig] = []
    problems: list[ImportProblem] = []

    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            call = node.value
            if callee_name(call.func) != "register_sandbox":
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
        args = bind_or_problem(
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
            sandbox = args.get("sandbox", "default")
            if not isinstance(sandbox, str):
                raise ValueError("sandbox must be a string")
            if not sandbox.strip():
                # The core's registry refuses it too (no sandbox has an empty name).
                raise ValueError(
                    "sandbox is empty: name a sandbox, or leave sandbox= out for 'default'"
                )
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
        left_out = _module_code_problems(filename, text, tree, node, source)
        if left_out:
            problems.extend(left_out)
            continue
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


def _module_code_problems(
    filename: str,
    text: str,
    tree: ast.Module,
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    source: str,
) -> list[ImportProblem]:
    """Name what of the module, outside the tool's function, the function uses.

    Only the function is kept: a module's import, constant or helper that it reads was
    dropped without a word, and the tool failed with NameError at its first call.
    """
    try:
        found = module_code_used(tree, node, source)
    except SyntaxError as exc:  # what `compile` refuses and `ast.parse` does not: `def f(x, x)`
        line = node.lineno + (exc.lineno or 1) - 1
        return [ImportProblem(filename, line, f"tool {node.name}(): syntax error: {exc.msg}")]
    except (RecursionError, MemoryError):
        return [
            ImportProblem(filename, node.lineno, f"tool {node.name}(): too deeply nested to read")
        ]
    return [ImportProblem(filename, left.line, left.sentence(text)) for left in found]


def _parse_config(
    filename: str, call: ast.Call, problems: list[ImportProblem]
) -> ParsedConfig | None:
    if len(call.args) != 1 or call.keywords:
        problems.append(
            ImportProblem(filename, call.lineno, "register_sandbox() takes one SandboxConfig(...)")
        )
        return None
    inner = call.args[0]
    if not isinstance(inner, ast.Call) or callee_name(inner.func) != "SandboxConfig":
        problems.append(
            ImportProblem(
                filename,
                call.lineno,
                "register_sandbox() argument must be SandboxConfig(...) written out with literals",
            )
        )
        return None
    values = bind_or_problem(
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


def parse_files(
    files: Iterable[SourceFile],
    *,
    target_sandbox: str | None = None,
    max_file_bytes: int | None = None,
) -> ParsedImport:
    """Parse a batch of files; raise ImportRefused with every problem found, if any.

    Django-free, for the checker process (`max_file_bytes` given, as no settings are read there).
    """
    result = ParsedImport()
    problems: list[ImportProblem] = []
    seen: dict[tuple[str, str], ParsedTool] = {}
    files = list(files)
    if not files:
        raise ImportRefused([ImportProblem("(no file)", None, "choose at least one .py file")])
    for item in files:
        text, problem = decode_source(item, limit=max_file_bytes)
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
