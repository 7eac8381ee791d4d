"""The registry: sandboxes, the tools in them, their extracted source and their checksums."""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import re
import textwrap
import threading
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from .kept import HARNESS_NAMES, global_names, outside_code
from .types import Tool, ToolParameter, ToolResponse

F = TypeVar("F", bound=Callable[..., Any])

# Fixed namespace so that tool ids are uuid5(name) and stay stable across restarts and hosts.
TOOL_ID_NAMESPACE = uuid.UUID("6f1d8a52-3c1e-5b7a-9a53-2d0c8e4b7f10")
DEFAULT_BASE_IMAGE = "jazzmine/base:bookworm"
_SANDBOX_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")

Backend = Literal["docker", "bwrap"]


def secret_names_problem(secrets: Any) -> str | None:
    """Say why `secrets` is not a list of secret names, each non-empty text (None when it is).

    Said before anything takes it for one: `list()` made a text one secret per character
    ('abc' was 'a', 'b', 'c'), and a number, None or dict stored as a secret's name broke
    every page listing the sandbox's secrets.
    """
    if not isinstance(secrets, (list, tuple)):
        return f"secrets must be a list of names, not {type(secrets).__name__}"
    for index, name in enumerate(secrets):
        if not isinstance(name, str) or not name.strip():
            shown = repr(name)[:40] if isinstance(name, str) else type(name).__name__
            return f"secrets[{index}] must be a name (non-empty text), not {shown}"
    return None


@dataclass
class SandboxConfig:
    """An environment profile: what is installed, which secrets exist, and how runs are held."""

    name: str
    dependencies: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)
    network: bool = False
    memory_mb: int = 256
    cpus: float = 1.0
    pids_limit: int = 128
    timeout_seconds: float = 30.0
    max_output_bytes: int = 1_000_000
    base_image: str = DEFAULT_BASE_IMAGE
    backend: Backend = "docker"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _SANDBOX_NAME.match(self.name):
            raise ValueError(
                f"Sandbox name {self.name!r} must be lowercase letters, digits, '-' or '_' "
                "(at most 63 characters, starting with a letter or digit)"
            )
        if self.backend not in ("docker", "bwrap"):
            raise ValueError(f"Sandbox {self.name!r}: backend must be 'docker' or 'bwrap'")
        for label, value in (
            ("memory_mb", self.memory_mb),
            ("cpus", self.cpus),
            ("pids_limit", self.pids_limit),
            ("timeout_seconds", self.timeout_seconds),
            ("max_output_bytes", self.max_output_bytes),
        ):
            if value <= 0:
                raise ValueError(f"Sandbox {self.name!r}: {label} must be positive, not {value}")
        problem = secret_names_problem(self.secrets)
        if problem:
            raise ValueError(f"Sandbox {self.name!r}: {problem}")
        # A switch: 1 or "yes" would pass for it in one place and not in another, None not at all.
        if not isinstance(self.network, bool):
            raise ValueError(
                f"Sandbox {self.name!r}: network must be True or False, "
                f"not {repr(self.network)[:40]}"
            )
        self.dependencies = list(self.dependencies)
        self.secrets = list(self.secrets)


def _full_digest(*parts: str) -> str:
    """Return the SHA-256 over the parts, unambiguously separated (64 hex chars)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\x00")
    return h.hexdigest()


def _digest(*parts: str) -> str:
    """Return 16 hex chars of `_full_digest`: a short name for pages, versions and builds.

    Never what decides which code runs or which image a run gets: 64 bits collide after some
    2^32 tries, few enough for a member to make two sources of one checksum, have an admin
    accept the harmless one and run the other (`digest`, `sandbox_digest` decide).
    """
    return _full_digest(*parts)[:16]


@dataclass
class RegisteredTool:
    """A tool as the registry keeps it: interface, source to teleport, and its needs."""

    tool: Tool
    fn: Callable[..., Any] | None
    source: str
    dependencies: list[str]
    secrets: list[str]
    sandbox_name: str
    function_name: str
    is_async: bool
    checksum: str = ""
    digest: str = ""  # the full SHA-256 `checksum` starts with

    def __post_init__(self) -> None:
        # Code and dependencies only: editing a description must not force an image rebuild.
        self.digest = _full_digest(self.source, json.dumps(sorted(set(self.dependencies))))
        self.checksum = self.digest[:16]

    @property
    def name(self) -> str:
        """Return the tool's name as the LLM calls it."""
        return self.tool.name

    @property
    def id(self) -> uuid.UUID:
        """Return the stable uuid5 of the tool's name."""
        return uuid.uuid5(TOOL_ID_NAMESPACE, self.tool.name)


def _function_node(tree: ast.Module, origin: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """Return the single top-level function of a parsed tool source."""
    functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if len(functions) > 1:
        where = ", ".join(f"{f.name} at line {f.lineno}" for f in functions[:5])
        where += ", ..." if len(functions) > 5 else ""
        raise ValueError(
            f"{origin}: expected exactly one function definition, found {len(functions)} "
            f"({where}): only the tool's own function runs in the sandbox; define helpers "
            "inside it"
        )
    if not functions:
        raise ValueError(f"{origin}: expected exactly one function definition, found 0")
    return functions[0]


def _strip_decorators(
    source: str, origin: str
) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Dedent a function's source and cut its decorator lines, checking the syntax.

    Anything else the source holds is refused, naming its line: only the function is kept,
    so an import beside it was dropped without a word and the tool failed at its first call.
    """
    text = textwrap.dedent(source)
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ValueError(
            f"{origin}: invalid Python syntax at line {exc.lineno}: {exc.msg}"
        ) from exc
    node = _function_node(tree, origin)
    left_out = outside_code(tree, node)
    if left_out is not None:
        raise ValueError(f"{origin}: line {left_out.line}: {left_out.sentence(text)}")
    lines = text.splitlines()
    # `node.lineno` is the `def` line; decorators sit above it and are left out.
    body = "\n".join(lines[node.lineno - 1 : node.end_lineno]) + "\n"
    return body, node


def extract_source(fn: Callable[..., Any]) -> str:
    """Read a function's source from its file, dedented, without decorators."""
    origin = getattr(fn, "__qualname__", repr(fn))
    try:
        raw = inspect.getsource(fn)
    except (OSError, TypeError) as exc:
        raise ValueError(
            f"Cannot read the source of {origin!r}: tools must be defined in a .py file, "
            "not in a REPL, a notebook or code run with exec()"
        ) from exc
    source, _ = _strip_decorators(raw, origin)
    return source


def _names_left_out(fn: Callable[..., Any], source: str) -> list[str]:
    """Return the names a live function reads that its module or enclosing function defines.

    Only its own source is kept (`extract_source`): an import or constant of its module, or
    a variable of the function it is defined in, is not in the sandbox.
    """
    target = inspect.unwrap(fn)
    around = set(getattr(target, "__globals__", {}))
    around.update(getattr(getattr(target, "__code__", None), "co_freevars", ()))
    return sorted((global_names(source) - HARNESS_NAMES - {target.__name__}) & around)


def _returns_tool_response(fn: Callable[..., Any]) -> bool:
    """Tell whether a function's return annotation names ToolResponse."""
    annotation = inspect.signature(fn).return_annotation
    if annotation is ToolResponse:
        return True
    return isinstance(annotation, str) and annotation.split(".")[-1] == "ToolResponse"


def _check_parameters(fn: Callable[..., Any], tool: Tool) -> None:
    """Refuse documented parameters the function cannot accept."""
    signature = inspect.signature(fn)
    kinds = {p.kind for p in signature.parameters.values()}
    if inspect.Parameter.VAR_KEYWORD in kinds:
        return
    accepted = set(signature.parameters)
    unknown = [p.name for p in tool.parameters if p.name not in accepted]
    if unknown:
        raise ValueError(
            f"Tool {tool.name!r} documents parameters {unknown} that {fn.__name__}() does not accept"
        )


class ToolRegistry:
    """Stores sandbox profiles and the tools registered into them."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._sandboxes: dict[str, SandboxConfig] = {}
        self._tools: dict[str, dict[str, RegisteredTool]] = {}
        self._prompt_cache: dict[str | None, str] = {}
        self._frozen = False
        self.register_sandbox(SandboxConfig(name="default"))

    def __getstate__(self) -> dict[str, Any]:
        # A registry pickles (one built in another process comes back whole); its lock does not.
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    def freeze(self) -> ToolRegistry:
        """Refuse every later change, and return this registry.

        A registry built once and handed to many callers (a cache) must stay what it was
        built from: a caller that registered into it would change every other caller's
        prompt, checksum and image.
        """
        with self._lock:
            self._frozen = True
        return self

    @property
    def frozen(self) -> bool:
        """Tell whether this registry refuses changes."""
        return self._frozen

    def _check_open(self) -> None:
        if self._frozen:
            raise RuntimeError(
                "this registry is shared and read-only; build a new one to change it"
            )

    # Sandboxes

    def register_sandbox(self, config: SandboxConfig) -> None:
        """Add or replace a sandbox profile; tools already in it stay."""
        with self._lock:
            self._check_open()
            self._sandboxes[config.name] = config
            self._tools.setdefault(config.name, {})
            self._invalidate(config.name)

    def get_sandbox(self, name: str) -> SandboxConfig:
        """Return a sandbox profile, or say which ones exist."""
        try:
            return self._sandboxes[name]
        except KeyError:
            known = ", ".join(sorted(self._sandboxes)) or "none"
            raise ValueError(f"Unknown sandbox {name!r}; registered sandboxes: {known}") from None

    def sandboxes(self) -> list[SandboxConfig]:
        """Return every sandbox profile, sorted by name."""
        return [self._sandboxes[n] for n in sorted(self._sandboxes)]

    # Tools

    def tool(
        self,
        description: str,
        parameters: list[ToolParameter] | None = None,
        dependencies: list[str] | None = None,
        secrets: list[str] | None = None,
        sandbox: str = "default",
        name: str | None = None,
    ) -> Callable[[F], F]:
        """Return a decorator registering a function as a tool in this registry."""

        def decorate(fn: F) -> F:
            self.register_function(
                fn,
                description=description,
                parameters=parameters or [],
                dependencies=dependencies or [],
                secrets=secrets or [],
                sandbox=sandbox,
                name=name,
            )
            return fn

        return decorate

    def register_function(
        self,
        fn: Callable[..., Any],
        *,
        description: str,
        parameters: list[ToolParameter],
        dependencies: list[str],
        secrets: list[str],
        sandbox: str = "default",
        name: str | None = None,
    ) -> RegisteredTool:
        """Register a live function: its source is read from its file."""
        self._check_open()  # before reading or checking anything
        self.get_sandbox(sandbox)
        spec = Tool(name=name or fn.__name__, description=description, parameters=list(parameters))
        source = extract_source(fn)
        left_out = _names_left_out(fn, source)
        if left_out:
            raise ValueError(
                f"Tool {spec.name!r}: {fn.__name__}() uses {', '.join(left_out)}, defined "
                "outside the function, which would not be kept: only the function's own code "
                "runs in the sandbox; move the imports and values it needs inside it"
            )
        _check_parameters(fn, spec)
        if not _returns_tool_response(fn):
            warnings.warn(
                f"Tool {spec.name!r} has no '-> ToolResponse' return hint; the sandbox executor "
                "expects every tool to return a ToolResponse",
                UserWarning,
                stacklevel=3,
            )
        registered = RegisteredTool(
            tool=spec,
            fn=fn,
            source=source,
            dependencies=list(dependencies),
            secrets=list(secrets),
            sandbox_name=sandbox,
            function_name=fn.__name__,
            is_async=inspect.iscoroutinefunction(fn),
        )
        return self._add(registered)

    def register_source(
        self,
        source: str,
        *,
        sandbox: str,
        description: str,
        parameters: list[ToolParameter] | None = None,
        dependencies: list[str] | None = None,
        secrets: list[str] | None = None,
        name: str | None = None,
    ) -> RegisteredTool:
        """Register a tool from its source text alone, without executing it."""
        self.get_sandbox(sandbox)
        cleaned, node = _strip_decorators(source, f"tool {name or '<source>'}")
        registered = RegisteredTool(
            tool=Tool(
                name=name or node.name, description=description, parameters=list(parameters or [])
            ),
            fn=None,
            source=cleaned,
            dependencies=list(dependencies or []),
            secrets=list(secrets or []),
            sandbox_name=sandbox,
            function_name=node.name,
            is_async=isinstance(node, ast.AsyncFunctionDef),
        )
        return self._add(registered)

    def _add(self, registered: RegisteredTool) -> RegisteredTool:
        with self._lock:
            self._check_open()
            tools = self._tools[registered.sandbox_name]
            existing = tools.get(registered.name)
            if existing is not None and not _same_origin(existing, registered):
                raise ValueError(
                    f"Sandbox {registered.sandbox_name!r} already has a tool named "
                    f"{registered.name!r}; give one of them another name with @tool(name=...)"
                )
            tools[registered.name] = registered
            self._invalidate(registered.sandbox_name)
        return registered

    def unregister(self, sandbox_name: str, tool_name: str) -> None:
        """Remove a tool from a sandbox."""
        with self._lock:
            self._check_open()
            self._tools.get(sandbox_name, {}).pop(tool_name, None)
            self._invalidate(sandbox_name)

    def tools(self, sandbox_name: str | None = None) -> list[RegisteredTool]:
        """Return the tools of one sandbox (or all), sorted by sandbox then name."""
        if sandbox_name is not None:
            self.get_sandbox(sandbox_name)
            names = [sandbox_name]
        else:
            names = sorted(self._tools)
        return [self._tools[s][t] for s in names for t in sorted(self._tools[s])]

    def get_tool(self, sandbox_name: str, tool_name: str) -> RegisteredTool:
        """Return one tool, or say which tools the sandbox has."""
        self.get_sandbox(sandbox_name)
        try:
            return self._tools[sandbox_name][tool_name]
        except KeyError:
            known = ", ".join(sorted(self._tools[sandbox_name])) or "none"
            raise ValueError(
                f"Sandbox {sandbox_name!r} has no tool {tool_name!r}; its tools: {known}"
            ) from None

    def tool_names(self, sandbox_name: str) -> list[str]:
        """Return the names of a sandbox's tools, sorted."""
        return [t.name for t in self.tools(sandbox_name)]

    def tool_parameter_names(self, sandbox_name: str) -> dict[str, list[str]]:
        """Return, by tool, the parameter names its prompt documents: all a script may pass.

        A function may take more than its tool documents; the harness refuses a call that
        passes any of those (`RunRequest.tool_parameters`).
        """
        return {t.name: [p.name for p in t.tool.parameters] for t in self.tools(sandbox_name)}

    # Aggregates

    def aggregate_dependencies(self, sandbox_name: str) -> list[str]:
        """Return the sandbox's and its tools' pip requirements, deduplicated and sorted."""
        config = self.get_sandbox(sandbox_name)
        merged = {d.strip() for d in config.dependencies if d.strip()}
        for registered in self.tools(sandbox_name):
            merged.update(d.strip() for d in registered.dependencies if d.strip())
        return sorted(merged, key=lambda d: (d.lower(), d))

    def aggregate_secrets(self, sandbox_name: str) -> list[str]:
        """Return every secret name the sandbox and its tools need, deduplicated and sorted."""
        config = self.get_sandbox(sandbox_name)
        merged = set(config.secrets)
        for registered in self.tools(sandbox_name):
            merged.update(registered.secrets)
        return sorted(merged)

    def tool_only_secrets(self, sandbox_name: str) -> dict[str, list[str]]:
        """Return, for each tool that has any, the secrets it declares and its sandbox does not.

        The sandbox's own secrets are every tool's; these are only their tool's, so the
        harness sets them for that tool's calls alone (a library another tool imports must
        not pick up, say, its AWS keys from the environment).
        """
        shared = set(self.get_sandbox(sandbox_name).secrets)
        scoped = {t.name: sorted(set(t.secrets) - shared) for t in self.tools(sandbox_name)}
        return {name: names for name, names in scoped.items() if names}

    def sandbox_checksum(self, sandbox_name: str) -> str:
        """Return a short hash of everything baked into the sandbox's image (for pages)."""
        return self.sandbox_digest(sandbox_name)[:16]

    def sandbox_digest(self, sandbox_name: str) -> str:
        """Return the SHA-256 of everything baked into the sandbox's image: tool code and deps.

        The image's tag carries it whole: an image is reused for any registry whose digest
        is the same, so a short one would let two contents share an image.
        """
        parts = [json.dumps(self.aggregate_dependencies(sandbox_name))]
        parts.extend(f"{t.name}={t.digest}" for t in self.tools(sandbox_name))
        return _full_digest(*parts)

    def build_tools_prompt(self, sandbox_name: str | None = None) -> str:
        """Return the XML block describing the tools of a sandbox (or all), cached."""
        cached = self._prompt_cache.get(sandbox_name)
        if cached is not None:
            return cached
        with self._lock:
            tools = self.tools(sandbox_name)
            body = "\n".join(t.tool.build_prompt() for t in tools)
            prompt = f"<tools>\n{body}\n</tools>" if body else "<tools/>"
            self._prompt_cache[sandbox_name] = prompt
        return prompt

    def _invalidate(self, sandbox_name: str) -> None:
        self._prompt_cache.pop(sandbox_name, None)
        self._prompt_cache.pop(None, None)


def _same_origin(a: RegisteredTool, b: RegisteredTool) -> bool:
    """Tell whether two registrations are the same function re-imported (a module reload)."""
    if a.fn is None or b.fn is None:
        return False
    return (a.fn.__module__, a.fn.__qualname__) == (b.fn.__module__, b.fn.__qualname__)


registry = ToolRegistry()

# `@tool(...)` registers the decorated function as a tool in the global registry.
tool = registry.tool
