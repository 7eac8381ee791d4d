"""The script tool: a `tool.json` (name, description, JSON-Schema parameters) plus one script."""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from jazzmine.core.tools.types import Tool, ToolParameter
from jazzmine.jsontext import JSONTextError, json_read, json_shown, leaf_where
from jazzmine.requirements import RequirementError, requirements_check

Runtime = Literal["python3", "node"]
RUNTIMES: dict[str, str] = {"python3": "script.py", "node": "script.js"}
SCRIPT_FILES: dict[str, Runtime] = {"script.py": "python3", "script.js": "node"}
DEFAULT_TIMEOUT = 300.0
# A tool name becomes a directory name and (for the Python adapter) a function name.
_SAFE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
# `runtime` is known but never stored: the script's file name says it (`_runtime_check`).
_KNOWN_KEYS = ("name", "description", "always_allow", "timeout", "parameters", "secrets",
               "dependencies", "runtime")  # fmt: skip
JSON_TYPES = ("string", "integer", "number", "boolean", "array", "object")
# How deep tool.json may nest. json reads ~990 levels, but each copy of a schema
# (`copy.deepcopy`, two frames a level) ran out of recursion at ~450: a 500 on the import page
# and the form. Far deeper than any JSON Schema a tool needs, far shallower than Python's stack.
MAX_JSON_DEPTH = 64


class ScriptToolError(ValueError):
    """A script tool could not be read: names the file and what is wrong with it."""

    def __init__(self, file: str, problem: str) -> None:
        self.file = file
        self.problem = problem
        super().__init__(f"{file}: {problem}")


@dataclass
class ScriptTool:
    """A tool implemented by a script that reads JSON args on stdin and prints JSON on stdout."""

    name: str
    description: str
    source: str
    parameters: dict[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}, "required": []}
    )
    runtime: Runtime = "python3"
    always_allow: bool = False
    timeout: float = DEFAULT_TIMEOUT
    # Extensions of the spec's tool.json: keychain names the tool may read, pip requirements.
    secrets: list[str] = field(default_factory=list)
    dependencies: list[str] = field(default_factory=list)
    # Unknown tool.json keys, kept so that export gives back what was imported.
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _SAFE_NAME.match(self.name):
            raise ScriptToolError(
                "tool.json",
                f"name {self.name!r} must be letters, digits and '_' (snake_case, at most 64 "
                "characters, not starting with a digit)",
            )
        if self.runtime not in RUNTIMES:
            raise ScriptToolError(
                "tool.json", f"runtime {self.runtime!r} must be one of {', '.join(RUNTIMES)}"
            )
        if not isinstance(self.timeout, (int, float)) or isinstance(self.timeout, bool):
            raise ScriptToolError("tool.json", f"timeout must be a number, not {self.timeout!r}")
        if not math.isfinite(self.timeout) or self.timeout <= 0:
            raise ScriptToolError("tool.json", f"timeout must be positive, not {self.timeout!r}")
        # tool.json reads `NaN`, `Infinity` and `1e999` (inf) as numbers, but no JSON column
        # stores one: the save failed with a database error after every other check passed.
        for key, value in (("parameters", self.parameters), ("extra", self.extra)):
            where = leaf_where(value, _non_finite)
            if where is not None:
                shown = (f"{key}.{where}" if where else key)[:60]
                raise ScriptToolError(
                    "tool.json",
                    f"field {shown!r} holds NaN or an infinite number; JSON numbers are finite",
                )
        # One name, one value: a second mention is a copy-paste slip, never a second secret.
        twice = sorted({name for name in self.secrets if self.secrets.count(name) > 1})
        if twice:
            raise ScriptToolError("tool.json", f"field 'secrets' names {twice[0]!r} twice")
        # The dependencies reach pip on the host: plain requirements only, in every entry path.
        try:
            self.dependencies = requirements_check(self.dependencies)
        except RequirementError as exc:
            raise ScriptToolError("tool.json", f"dependencies {exc}") from None

    @property
    def json_depth(self) -> int:
        """Return how deep its tool.json nests: savers refuse more than MAX_JSON_DEPTH.

        Not refused here: a row stored before the bound must stay readable.
        """
        return 1 + max(json_depth(self.parameters), json_depth(self.extra))

    @property
    def script_filename(self) -> str:
        """Return `script.py` or `script.js`."""
        return RUNTIMES[self.runtime]

    @property
    def properties(self) -> dict[str, Any]:
        """Return the schema's properties (empty when the schema has none)."""
        props = self.parameters.get("properties")
        return props if isinstance(props, dict) else {}

    @property
    def required(self) -> list[str]:
        """Return the names the schema marks as required."""
        req = self.parameters.get("required")
        return [r for r in req if isinstance(r, str)] if isinstance(req, list) else []

    def to_json_dict(self) -> dict[str, Any]:
        """Return the tool.json content, keys in the spec's order."""
        data: dict[str, Any] = {"name": self.name, "description": self.description}
        # The spec leaves always_allow out unless it is true.
        if self.always_allow:
            data["always_allow"] = True
        if self.timeout != DEFAULT_TIMEOUT:
            data["timeout"] = (
                int(self.timeout) if float(self.timeout).is_integer() else self.timeout
            )
        data["parameters"] = copy.deepcopy(self.parameters)
        if self.secrets:
            data["secrets"] = list(self.secrets)
        if self.dependencies:
            data["dependencies"] = list(self.dependencies)
        data.update(copy.deepcopy(self.extra))
        return data

    def to_json_text(self) -> str:
        """Return tool.json as the spec writes it: two-space indent, trailing newline."""
        return json_shown(self.to_json_dict(), indent=2) + "\n"

    def files(self) -> dict[str, str]:
        """Return the two files of the on-disk layout, by file name."""
        return {"tool.json": self.to_json_text(), self.script_filename: self.source}

    def tool_parameters(self) -> list[ToolParameter]:
        """Translate the JSON-Schema properties into jazzmine ToolParameters."""
        required = set(self.required)
        result = []
        for name, prop in self.properties.items():
            prop = prop if isinstance(prop, dict) else {}
            type_ = prop.get("type")
            examples = prop.get("examples")
            result.append(
                ToolParameter(
                    name=name,
                    type=type_ if isinstance(type_, str) else "string",
                    description=prop.get("description"),
                    default=prop.get("default"),
                    required=name in required,
                    options=list(prop["enum"]) if isinstance(prop.get("enum"), list) else None,
                    examples=list(examples) if isinstance(examples, list) else None,
                )
            )
        return result

    def to_tool(self) -> Tool:
        """Return the jazzmine Tool the LLM reads for this script tool."""
        return Tool(name=self.name, description=self.description, parameters=self.tool_parameters())

    def sample_args(self) -> dict[str, Any]:
        """Return arguments for a trial run: defaults, else the first example or enum value."""
        args: dict[str, Any] = {}
        for name, prop in self.properties.items():
            if not isinstance(prop, dict):
                continue
            if "default" in prop:
                args[name] = prop["default"]
            elif isinstance(prop.get("examples"), list) and prop["examples"]:
                args[name] = prop["examples"][0]
            elif isinstance(prop.get("enum"), list) and prop["enum"]:
                args[name] = prop["enum"][0]
        return args

    @classmethod
    def from_json_dict(
        cls, data: Any, *, source: str, runtime: Runtime = "python3", file: str = "tool.json"
    ) -> ScriptTool:
        """Build a script tool from parsed tool.json, refusing missing fields and wrong types."""
        if not isinstance(data, dict):
            raise ScriptToolError(file, f"must hold a JSON object, not {_kind(data)}")
        if json_depth(data) > MAX_JSON_DEPTH:  # before anything copies it
            raise ScriptToolError(file, f"is nested more than {MAX_JSON_DEPTH} levels deep")
        for key in ("name", "description", "parameters"):
            if key not in data:
                raise ScriptToolError(file, f"missing field {key!r}")
        _expect(data, "name", str, "a string", file)
        _expect(data, "description", str, "a string", file)
        _expect(data, "parameters", dict, "a JSON object (a JSON Schema)", file)
        _expect(data, "always_allow", bool, "true or false", file)
        _runtime_check(data, runtime, file)
        if "timeout" in data and (
            not isinstance(data["timeout"], (int, float)) or isinstance(data["timeout"], bool)
        ):
            raise ScriptToolError(
                file, f"field 'timeout' must be a number of seconds, not {_kind(data['timeout'])}"
            )
        try:
            timeout = float(data.get("timeout", DEFAULT_TIMEOUT))
        except OverflowError:
            # JSON integers have no bound; float() refuses one past ~1.8e308.
            raise ScriptToolError(
                file, "field 'timeout' is too far out of range to be a number of seconds"
            ) from None
        for key in ("secrets", "dependencies"):
            value = data.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ScriptToolError(file, f"field {key!r} must be a list of strings")
        try:
            return cls(
                name=data["name"],
                description=data["description"],
                source=source,
                parameters=copy.deepcopy(data["parameters"]),
                runtime=runtime,
                always_allow=data.get("always_allow", False),
                timeout=timeout,
                secrets=list(data.get("secrets", [])),
                dependencies=list(data.get("dependencies", [])),
                extra={k: copy.deepcopy(v) for k, v in data.items() if k not in _KNOWN_KEYS},
            )
        except ScriptToolError as exc:
            raise ScriptToolError(file, exc.problem) from None


def parse_tool_json(text: str, file: str = "tool.json") -> Any:
    """Parse tool.json text, reporting line and column of a syntax error."""
    try:
        return json_read(text)
    except JSONTextError as exc:
        raise ScriptToolError(file, exc.problem) from None


def json_depth(value: Any) -> int:
    """Return how many objects and arrays deep a JSON value nests (0 for a scalar).

    Walked without recursion: the value may nest as deep as the parser allowed.
    """
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            stack.extend((inner, depth + 1) for inner in item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend((inner, depth + 1) for inner in item)
        else:
            continue
        deepest = max(deepest, depth + 1)
    return deepest


def _kind(value: Any) -> str:
    """Name a JSON value's type the way tool.json authors think of it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _expect(data: dict[str, Any], key: str, type_: type, wanted: str, file: str) -> None:
    if key in data and not isinstance(data[key], type_):
        raise ScriptToolError(file, f"field {key!r} must be {wanted}, not {_kind(data[key])}")


def _runtime_check(data: dict[str, Any], runtime: str, file: str) -> None:
    """Refuse a tool.json whose `runtime` is not the one its script's file name sets.

    Kept as an unknown key, `"runtime": "ruby"` or `"node"` beside a script.py was ignored
    without a word: the tool ran as python3, and its export wrote the contradiction back.
    """
    if "runtime" not in data:
        return
    said = data["runtime"]
    if not isinstance(said, str):
        raise ScriptToolError(file, f"field 'runtime' must be a string, not {_kind(said)}")
    script = RUNTIMES.get(runtime, "its script")
    if said not in RUNTIMES:
        known = ", ".join(f"{name} ({RUNTIMES[name]})" for name in RUNTIMES)
        raise ScriptToolError(
            file,
            f"field 'runtime': {said[:40]!r} is not a runtime; the script's file name sets it, "
            f"one of {known}",
        )
    if said != runtime:
        raise ScriptToolError(
            file,
            f"field 'runtime' says {said!r}, but its script is {script}; the script's file "
            f"name sets the runtime ({RUNTIMES[said]} for {said})",
        )


def _non_finite(item: Any) -> bool:
    """Tell whether a JSON leaf is NaN or an infinity, which no JSON column stores."""
    return isinstance(item, float) and not math.isfinite(item)
