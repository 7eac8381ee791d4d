"""The spec's anti-hallucination checklist, run statically over tool.json and its script.

Every item is computed on its own so that one mistake fails one item; items that cannot be
checked (tool.json is not JSON, the script does not parse) say so and count as failed.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from jazzmine.core.tools.lint import LintItem

from .model import JSON_TYPES, RUNTIMES, SCRIPT_FILES, ScriptTool

DESCRIPTION_MIN = 60
DESCRIPTION_MAX = 200
NON_TRIVIAL_MIN = 20


TITLES: dict[str, str] = {
    "valid_json": "tool.json is valid JSON with a name, a description and parameters",
    "name_format": "name is snake_case, verb first, without the script_ prefix",
    "schema_object": 'parameters is a JSON Schema with type "object" and properties',
    "required_declared": "every required name is a declared property",
    "property_fields": "every property has a JSON type and a description",
    "defaults_typed": "defaults have the declared type (and are enum values)",
    "optional_defaults": "every optional parameter has a default",
    "defaults_match_script": "tool.json defaults equal the script's own defaults",
    "description_length": f"tool description is {DESCRIPTION_MIN}-{DESCRIPTION_MAX} characters",
    "description_usefulness": "tool description says when to use it, in plain English",
    "parameter_descriptions": "parameter descriptions are complete for non-trivial types",
    "stdin_contract": "the script reads its arguments as JSON from stdin",
    "stdout_contract": "the script prints one JSON object on stdout and nothing else",
    "stderr_contract": "errors go to stderr with a non-zero exit",
    "required_guarded": "the script checks every required parameter",
    "no_secret_parameters": "no secret is taken as a parameter",
    "no_hardcoded_keys": "no key or token is written into the files",
    "imports_available": "imports are standard library or declared dependencies",
}


@dataclass
class _Script:
    """What the static reading of a script found."""

    runtime: str
    error: str | None = None
    reads_stdin: bool = False
    json_outputs: list[int] = field(default_factory=list)
    debug_outputs: list[int] = field(default_factory=list)
    stderr_writes: list[int] = field(default_factory=list)
    error_exits: list[int] = field(default_factory=list)
    # name -> ("literal", value) | ("none", None) | ("unknown", None)
    defaults: dict[str, tuple[str, Any]] = field(default_factory=dict)
    guarded: set[str] = field(default_factory=set)
    imports: dict[str, int] = field(default_factory=dict)


def lint_tool(tool: ScriptTool) -> list[LintItem]:
    """Lint a loaded script tool."""
    return lint_files(
        tool.to_json_text(), tool.source, script_filename=tool.script_filename, folder=tool.name
    )


def lint_passed(items: list[LintItem]) -> bool:
    """Tell whether every item passed."""
    return all(item.passed for item in items)


def lint_files(
    tool_json: str, script: str, *, script_filename: str = "script.py", folder: str | None = None
) -> list[LintItem]:
    """Run the whole checklist over the raw text of tool.json and the script."""
    runtime = SCRIPT_FILES.get(script_filename, "python3")
    results: dict[str, tuple[bool, str]] = {}
    data, json_problem = _load(tool_json)
    results["valid_json"] = (json_problem is None, json_problem or "ok")
    scan = _scan_python(script) if runtime == "python3" else _scan_js(script)

    if data is None:
        skipped = (False, "not checked: tool.json could not be read")
        for key in TITLES:
            results.setdefault(key, skipped)
    else:
        schema = data.get("parameters") if isinstance(data.get("parameters"), dict) else {}
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        props = {k: v for k, v in props.items() if isinstance(v, dict)}
        raw_required = schema.get("required", [])
        required = (
            [r for r in raw_required if isinstance(r, str)]
            if isinstance(raw_required, list)
            else []
        )
        results["name_format"] = _check_name(data.get("name"), folder)
        results["schema_object"] = _check_schema_object(data.get("parameters"))
        results["required_declared"] = _check_required(raw_required, props)
        results["property_fields"] = _check_property_fields(props)
        results["defaults_typed"] = _check_defaults_typed(props)
        results["optional_defaults"] = _check_optional_defaults(props, required)
        results["defaults_match_script"] = _check_defaults_match(props, scan)
        description = data.get("description") if isinstance(data.get("description"), str) else ""
        results["description_length"] = _check_description_length(description)
        results["description_usefulness"] = _check_usefulness(description)
        results["parameter_descriptions"] = _check_parameter_descriptions(props)
        results["required_guarded"] = _check_guarded(required, props, scan)
        results["no_secret_parameters"] = _check_secret_parameters(props)
        deps = data.get("dependencies") if isinstance(data.get("dependencies"), list) else []
        results["imports_available"] = _check_imports(scan, [d for d in deps if isinstance(d, str)])
    results["stdin_contract"] = _check_stdin(scan)
    results["stdout_contract"] = _check_stdout(scan)
    results["stderr_contract"] = _check_stderr(scan)
    results["no_hardcoded_keys"] = _check_keys({"tool.json": tool_json, script_filename: script})
    if data is None:
        results["imports_available"] = _check_imports(scan, [])
    return [LintItem(key, title, *results[key]) for key, title in TITLES.items()]


# tool.json


def _load(text: str) -> tuple[dict[str, Any] | None, str | None]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    if not isinstance(data, dict):
        return None, "tool.json must hold a JSON object"
    missing = [k for k in ("name", "description", "parameters") if k not in data]
    if missing:
        return data, f"missing field(s): {', '.join(missing)}"
    wrong = [k for k in ("name", "description") if not isinstance(data[k], str)]
    if wrong:
        return data, f"field(s) {', '.join(wrong)} must be strings"
    return data, None


# Verbs an LLM recognises as actions; names that start elsewhere read as nouns (rsi_calc).
VERBS = frozenset(
    """add aggregate analyze analyse append apply approve archive assign audit book build
    calculate cancel check classify clean clear close compare compile compress compute
    convert copy count create crop deduplicate decode delete deploy describe detect diff
    disable download draft edit enable encode enrich estimate evaluate explain export
    extract fetch filter find format forecast generate geocode get group hash import
    index inspect list load lookup make map match measure merge move normalize normalise
    notify open parse pay ping plan plot post predict preview publish query rank read
    recommend reconcile refresh refund register reject remove rename render reorder
    replace report request reserve reset resize resolve restore retrieve review rotate
    route run sample save scan schedule score scrape search send set share simulate sort
    split start stop store submit subscribe suggest summarize summarise sync tag test
    track transcribe transform translate trigger unsubscribe update upload validate
    verify watch write""".split()  # noqa: SIM905
)
VAGUE_VERBS = frozenset({"process", "handle", "do", "manage", "perform", "execute", "misc"})
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")


def _check_name(name: Any, folder: str | None) -> tuple[bool, str]:
    if not isinstance(name, str) or not name:
        return False, "name is missing"
    if not _SNAKE.match(name):
        return False, f"{name!r} is not snake_case (lowercase words joined by '_')"
    if name.startswith("script_"):
        return False, f"{name!r}: drop the script_ prefix, the runtime adds it"
    words = name.split("_")
    if words[0] in VAGUE_VERBS:
        return False, f"{name!r} starts with the vague verb {words[0]!r}; say what it does"
    if words[0] not in VERBS:
        return False, f"{name!r} does not start with a verb (e.g. calculate_rsi, not rsi_calc)"
    if len(words) < 2:
        return False, f"{name!r} names no object: use verb_noun, e.g. fetch_weather"
    if folder is not None and folder != name:
        return False, f"name {name!r} differs from its folder {folder!r}"
    return True, "ok"


def _check_schema_object(schema: Any) -> tuple[bool, str]:
    if not isinstance(schema, dict):
        return False, "parameters must be a JSON object"
    if schema.get("type") != "object":
        return False, f'parameters.type must be "object", not {schema.get("type")!r}'
    if not isinstance(schema.get("properties", {}), dict):
        return False, "parameters.properties must be an object (one entry per parameter)"
    return True, "ok"


def _check_required(required: Any, props: dict[str, Any]) -> tuple[bool, str]:
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return False, "parameters.required must be an array of names"
    missing = [r for r in required if r not in props]
    if missing:
        return False, f"required but not declared in properties: {', '.join(missing)}"
    return True, "ok"


def _check_property_fields(props: dict[str, Any]) -> tuple[bool, str]:
    problems = []
    for name, prop in props.items():
        if prop.get("type") not in JSON_TYPES:
            problems.append(
                f"{name}: type must be one of {'/'.join(JSON_TYPES)}, not {prop.get('type')!r}"
            )
        if not isinstance(prop.get("description"), str) or not prop["description"].strip():
            problems.append(f"{name}: description is missing")
    return (not problems, "; ".join(problems) or "ok")


def _matches_type(value: Any, type_: Any) -> bool:
    checks = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "array": lambda v: isinstance(v, list),
        "object": lambda v: isinstance(v, dict),
    }
    check = checks.get(type_) if isinstance(type_, str) else None
    return True if check is None else check(value)


def _check_defaults_typed(props: dict[str, Any]) -> tuple[bool, str]:
    problems = []
    for name, prop in props.items():
        if "default" not in prop:
            continue
        default = prop["default"]
        if not _matches_type(default, prop.get("type")):
            problems.append(f"{name}: default {json.dumps(default)} is not {prop.get('type')}")
        elif isinstance(prop.get("enum"), list) and default not in prop["enum"]:
            problems.append(f"{name}: default {json.dumps(default)} is not one of its enum values")
    return (not problems, "; ".join(problems) or "ok")


def _check_optional_defaults(props: dict[str, Any], required: list[str]) -> tuple[bool, str]:
    missing = [n for n, p in props.items() if n not in required and "default" not in p]
    if missing:
        return False, (
            f"optional without a default: {', '.join(missing)} (the LLM cannot tell what "
            "leaving it out means)"
        )
    return True, "ok"


def _same(a: Any, b: Any) -> bool:
    """Compare JSON values without letting True equal 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _check_defaults_match(props: dict[str, Any], scan: _Script) -> tuple[bool, str]:
    if scan.error:
        return False, f"not checked: {scan.error}"
    problems = []
    for name, prop in props.items():
        found = scan.defaults.get(name)
        if found is None or found[0] == "unknown":
            continue  # not read with a default the analysis can see
        kind, value = found
        if "default" in prop:
            if kind == "none":
                problems.append(
                    f"{name}: tool.json says default {json.dumps(prop['default'])} but the script "
                    "reads it without one"
                )
            elif not _same(value, prop["default"]):
                problems.append(
                    f"{name}: tool.json default {json.dumps(prop['default'])} != script default "
                    f"{json.dumps(value)}"
                )
        elif kind == "literal":
            problems.append(
                f"{name}: the script defaults to {json.dumps(value)} but tool.json declares no default"
            )
    return (not problems, "; ".join(problems) or "ok")


def _check_description_length(description: str) -> tuple[bool, str]:
    length = len(description.strip())
    if length < DESCRIPTION_MIN:
        return (
            False,
            f"{length} characters: too short to say when to use the tool (min {DESCRIPTION_MIN})",
        )
    if length > DESCRIPTION_MAX:
        return False, (
            f"{length} characters (max {DESCRIPTION_MAX}): move types, enums and bounds into "
            "the parameter descriptions"
        )
    return True, f"{length} characters"


def _is_english(text: str) -> bool:
    """Tell whether the letters of a text are (almost all) Latin ASCII letters."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return True
    ascii_letters = sum(1 for c in letters if c.isascii())
    return ascii_letters / len(letters) >= 0.95 and not any(
        "CJK" in unicodedata.name(c, "") for c in letters
    )


_FILLER = re.compile(
    r"\b(this tool|a (?:simple|powerful|handy|useful|helpful|great) (?:tool|utility)|simply|"
    r"basically|easy[- ]to[- ]use|helps? you|very|really|awesome|powerful|seamless(?:ly)?|"
    r"leverag(?:e|es|ing)|in order to|state[- ]of[- ]the[- ]art)\b",
    re.IGNORECASE,
)
_IMPLEMENTATION = re.compile(
    r"\b(stdin|stdout|stderr|json\.dumps|subprocess|python3?|node\.?js|javascript|script\.(?:py|js)|"
    r"urllib|requests library|pandas|numpy|sys\.exit|exit code|implemented|implementation|"
    r"under the hood|internally|http request|api call)\b",
    re.IGNORECASE,
)
_CONTRACT = re.compile(
    r"(\b(?:parameters?|params?|arguments?|integer|boolean|enum|json schema|defaults? (?:to|is)|"
    r"required|optional)\b|\bbetween -?\d+(?:\.\d+)? and -?\d+|--[a-z])",
    re.IGNORECASE,
)
_TRIGGER = re.compile(
    r"\b(when|whenever|if|asks?|asking|use (?:it |this )?(?:for|to|on|with|after|before|instead))\b",
    re.IGNORECASE,
)


def _check_usefulness(description: str) -> tuple[bool, str]:
    problems = []
    if not description.strip():
        return False, "description is empty"
    if not _is_english(description):
        problems.append("write it in English")
    for pattern, why in (
        (_FILLER, "filler"),
        (_IMPLEMENTATION, "implementation detail"),
        (_CONTRACT, "call-contract detail (belongs in the parameters)"),
    ):
        match = pattern.search(description)
        if match:
            problems.append(f"{why}: {match.group(0)!r}")
    if not _TRIGGER.search(description):
        problems.append("say when to call it (e.g. 'Use when the user asks ...')")
    return (not problems, "; ".join(problems) or "ok")


def _check_parameter_descriptions(props: dict[str, Any]) -> tuple[bool, str]:
    problems = []
    for name, prop in props.items():
        description = prop.get("description")
        if not isinstance(description, str) or not description.strip():
            continue  # property_fields reports a missing description
        if not _is_english(description):
            problems.append(f"{name}: write the description in English")
        enum = prop.get("enum") if isinstance(prop.get("enum"), list) else None
        if (prop.get("type") in ("object", "array") or enum) and len(
            description.strip()
        ) < NON_TRIVIAL_MIN:
            problems.append(
                f"{name}: {len(description.strip())} characters is too short for a "
                f"{'enum' if enum else prop.get('type')} (min {NON_TRIVIAL_MIN}; give accepted values and an example)"
            )
        if enum:
            lowered = description.lower()
            unexplained = [v for v in enum if str(v).lower() not in lowered]
            if unexplained:
                problems.append(
                    f"{name}: enum values not explained in the description: "
                    f"{', '.join(json.dumps(v) for v in unexplained)}"
                )
    return (not problems, "; ".join(problems) or "ok")


_SECRET_WORDS = {"token", "password", "passwd", "secret", "apikey", "credential", "credentials",
                 "pwd", "passphrase"}  # fmt: skip
_KEY_QUALIFIERS = {"api", "access", "private", "secret", "auth", "client", "signing", "license"}


def _check_secret_parameters(props: dict[str, Any]) -> tuple[bool, str]:
    flagged = []
    for name in props:
        words = re.split(r"[_\-]+|(?<=[a-z])(?=[A-Z])", name)
        lowered = [w.lower() for w in words if w]
        key_like = lowered == ["key"] or (
            "key" in lowered and any(q in lowered for q in _KEY_QUALIFIERS)
        )
        if key_like or any(w in _SECRET_WORDS for w in lowered):
            flagged.append(name)
    if flagged:
        return False, (
            f"secret-like parameter(s): {', '.join(flagged)}; read secrets from the keychain "
            "(/v1/key?key=NAME) instead of letting the LLM pass them"
        )
    return True, "ok"


_KEY_PATTERNS = [
    ("AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("OpenAI/Anthropic key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}")),
    ("Stripe key", re.compile(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("private key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
    (
        "JSON Web Token",
        re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ),
    ("bearer token", re.compile(r"Bearer\s+[A-Za-z0-9_\-\.=]{20,}")),
    (
        "secret assigned to a variable",
        re.compile(
            r"(?i)\b[\w\-]*(?:api[_\-]?key|secret|token|passw(?:or)?d)[\w\-]*\b[\"']?\s*[:=]\s*"
            r"[\"']([A-Za-z0-9_\-\.+/=]{12,})[\"']"
        ),
    ),
]


def _check_keys(files: dict[str, str]) -> tuple[bool, str]:
    found = []
    for file, text in files.items():
        for label, pattern in _KEY_PATTERNS:
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                secret = match.group(0)
                masked = secret[:4] + "…" if len(secret) > 4 else "…"
                found.append(f"{file} line {line}: {label} ({masked})")
    if found:
        return False, "; ".join(sorted(set(found))) + " — fetch it from /v1/key instead"
    return True, "ok"


def _check_stdin(scan: _Script) -> tuple[bool, str]:
    if scan.error:
        return False, f"not checked: {scan.error}"
    if not scan.reads_stdin:
        example = (
            'json.loads(sys.stdin.read() or "{}")'
            if scan.runtime == "python3"
            else "JSON.parse(fs.readFileSync(0, 'utf-8') || '{}')"
        )
        return False, f"no JSON read from stdin found; start with {example}"
    return True, "ok"


def _check_stdout(scan: _Script) -> tuple[bool, str]:
    if scan.error:
        return False, f"not checked: {scan.error}"
    if scan.debug_outputs:
        lines = ", ".join(str(n) for n in scan.debug_outputs)
        return (
            False,
            f"output on stdout that is not JSON (line {lines}): debug output goes to stderr",
        )
    if not scan.json_outputs:
        example = (
            "print(json.dumps(result))"
            if scan.runtime == "python3"
            else ("process.stdout.write(JSON.stringify(result))")
        )
        return False, f"no JSON printed on stdout; end with {example}"
    return True, "ok"


def _check_stderr(scan: _Script) -> tuple[bool, str]:
    if scan.error:
        return False, f"not checked: {scan.error}"
    missing = []
    if not scan.stderr_writes:
        missing.append("no error message written to stderr")
    if not scan.error_exits:
        missing.append("no non-zero exit (sys.exit(1) / process.exit(1))")
    return (not missing, "; ".join(missing) or "ok")


def _check_guarded(required: list[str], props: dict[str, Any], scan: _Script) -> tuple[bool, str]:
    if scan.error:
        return False, f"not checked: {scan.error}"
    unguarded = [r for r in required if r in props and r not in scan.guarded]
    if unguarded:
        return False, (
            f"no missing-value check for required {', '.join(unguarded)}: print to stderr and "
            "exit 1 when it is absent"
        )
    return True, "ok"


_NODE_BUILTINS = frozenset(
    """assert buffer child_process crypto dns events fs http https net os path process
    querystring readline stream string_decoder timers tls url util zlib worker_threads""".split()  # noqa: SIM905
)


def _normalise(name: str) -> str:
    return re.split(r"[<>=!~\[; ]", name.strip(), maxsplit=1)[0].lower().replace("-", "_")


def _check_imports(scan: _Script, dependencies: list[str]) -> tuple[bool, str]:
    if scan.error:
        return False, f"not checked: {scan.error}"
    declared = {_normalise(d) for d in dependencies}
    known = set(sys.stdlib_module_names) if scan.runtime == "python3" else set(_NODE_BUILTINS)
    missing = sorted(
        f"{m} (line {line})"
        for m, line in scan.imports.items()
        if m not in known and _normalise(m) not in declared
    )
    if missing:
        return False, (
            f"third-party import(s) not declared in tool.json dependencies: {', '.join(missing)}; "
            "prefer the standard library"
        )
    return True, "ok"


# Static reading of a Python script


def _dotted(node: ast.AST) -> str:
    """Return `a.b.c` for a Name/Attribute chain, else ''."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _contains(node: ast.AST, predicate: Any) -> bool:
    return any(predicate(n) for n in ast.walk(node))


def _is_call(node: ast.AST, *names: str) -> bool:
    return isinstance(node, ast.Call) and _dotted(node.func) in names


def _scan_python(source: str) -> _Script:
    scan = _Script(runtime="python3")
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        scan.error = f"script.py does not parse (line {exc.lineno}: {exc.msg})"
        return scan
    constants = {
        t.id: n.value
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }

    def reads_stdin_text(node: ast.AST) -> bool:
        return _contains(node, lambda n: _is_call(n, "sys.stdin.read", "sys.stdin.readline")) or (
            _contains(node, lambda n: isinstance(n, ast.Name) and n.id in stdin_vars)
        )

    stdin_vars: set[str] = set()
    args_vars: set[str] = set()
    # Two passes: `raw = sys.stdin.read()` may come before `args = json.loads(raw or "{}")`.
    for _ in range(2):
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign):
                continue
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
            if _is_call(node.value, "sys.stdin.read") or (
                isinstance(node.value, ast.BoolOp)
                and (_contains(node.value, lambda n: _is_call(n, "sys.stdin.read")))
            ):
                stdin_vars.update(targets)
            loads = [
                n for n in ast.walk(node.value)
                if (_is_call(n, "json.loads") and n.args and reads_stdin_text(n.args[0]))
                or (_is_call(n, "json.load") and n.args and _dotted(n.args[0]) == "sys.stdin")
            ]  # fmt: skip
            if loads:
                args_vars.update(targets)
                scan.reads_stdin = True
    for node in ast.walk(tree):
        if (_is_call(node, "json.load") and node.args and _dotted(node.args[0]) == "sys.stdin") or (
            _is_call(node, "json.loads") and node.args and reads_stdin_text(node.args[0])
        ):
            scan.reads_stdin = True
    if not args_vars:
        # Arguments read some other way (argv, a file): still find them so that the default
        # and guard items judge the script on their own and only stdin_contract fails.
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _contains(
                node.value, lambda n: _is_call(n, "json.loads", "json.load")
            ):
                args_vars.update(t.id for t in node.targets if isinstance(t, ast.Name))

    def literal(node: ast.AST) -> tuple[str, Any]:
        if isinstance(node, ast.Name) and node.id in constants:
            node = constants[node.id]
        try:
            return "literal", ast.literal_eval(node)
        except ValueError:
            return "unknown", None

    param_vars: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if (
                node.func.attr == "get"
                and isinstance(owner, ast.Name)
                and owner.id in args_vars
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                name = node.args[0].value
                if len(node.args) > 1:
                    scan.defaults[name] = literal(node.args[1])
                else:
                    scan.defaults.setdefault(name, ("none", None))
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and len(node.values) == 2:
            first = node.values[0]
            if (
                _is_call(first, *(f"{v}.get" for v in args_vars))
                and isinstance(first, ast.Call)
                and len(first.args) == 1
                and isinstance(first.args[0], ast.Constant)
            ):
                scan.defaults[first.args[0].value] = literal(node.values[1])
        if isinstance(node, ast.Assign):
            value = node.value
            for sub in ast.walk(value):
                key = _param_key(sub, args_vars)
                if key is not None:
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            param_vars[target.id] = key
        if (
            isinstance(node, ast.Compare)
            and any(isinstance(o, (ast.In, ast.NotIn)) for o in node.ops)
            and isinstance(node.left, ast.Constant)
            and isinstance(node.left.value, str)
            and any(isinstance(c, ast.Name) and c.id in args_vars for c in node.comparators)
        ):
            scan.guarded.add(node.left.value)
        if isinstance(node, ast.Try) and any(
            _dotted(h.type) in ("KeyError", "Exception", "LookupError")
            for h in node.handlers
            if h.type
        ):
            for stmt in node.body:
                for sub in ast.walk(stmt):
                    if isinstance(sub, ast.Subscript):
                        key = _param_key(sub, args_vars)
                        if key is not None:
                            scan.guarded.add(key)
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.IfExp, ast.While, ast.Assert)):
            for sub in ast.walk(node.test):
                if isinstance(sub, ast.Name) and sub.id in param_vars:
                    scan.guarded.add(param_vars[sub.id])
                key = _param_key(sub, args_vars)
                if key is not None:
                    scan.guarded.add(key)

    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if _is_call(node, "print"):
            assert isinstance(node, ast.Call)
            target = next((k.value for k in node.keywords if k.arg == "file"), None)
            if target is not None and _dotted(target) == "sys.stderr":
                scan.stderr_writes.append(line)
            elif node.args and _is_call(node.args[0], "json.dumps"):
                scan.json_outputs.append(line)
            else:
                scan.debug_outputs.append(line)
        elif _is_call(node, "sys.stdout.write"):
            assert isinstance(node, ast.Call)
            if node.args and _is_call(node.args[0], "json.dumps"):
                scan.json_outputs.append(line)
            else:
                scan.debug_outputs.append(line)
        elif _is_call(node, "json.dump"):
            assert isinstance(node, ast.Call)
            if len(node.args) > 1 and _dotted(node.args[1]) == "sys.stdout":
                scan.json_outputs.append(line)
        elif _is_call(node, "sys.stderr.write"):
            scan.stderr_writes.append(line)
        elif _is_call(node, "sys.exit", "exit", "os._exit", "SystemExit"):
            assert isinstance(node, ast.Call)
            code = node.args[0] if node.args else None
            if code is not None and not (
                isinstance(code, ast.Constant) and code.value in (0, None)
            ):
                scan.error_exits.append(line)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module] if node.module and not node.level else [])
            )
            for module in names:
                scan.imports.setdefault(module.split(".")[0], line)
    return scan


def _param_key(node: ast.AST, args_vars: set[str]) -> str | None:
    """Return the parameter name read by `args.get("x")` or `args["x"]`, else None."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in args_vars
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.args[0].value
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id in args_vars
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ):
        return node.slice.value
    return None


# Regex reading of a JavaScript script (a full parser is more than the checklist needs)

_JS_LITERAL = (
    r"(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|true|false|null|\[[^\]]*\]|\{[^}]*\})"
)


def _js_value(text: str) -> tuple[str, Any]:
    text = text.strip()
    if text.startswith("'") and text.endswith("'"):
        text = json.dumps(text[1:-1].replace("\\'", "'"))
    try:
        return "literal", json.loads(text)
    except ValueError:
        return "unknown", None


def _strip_js_comments(source: str) -> str:
    source = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), source, flags=re.S)
    return re.sub(r"(?m)^\s*//.*$", "", source)


def _scan_js(source: str) -> _Script:
    scan = _Script(runtime="node")
    text = _strip_js_comments(source)

    def line_of(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    reads = re.search(
        r"readFileSync\(\s*(?:0|process\.stdin\.fd|['\"]/dev/stdin['\"])|process\.stdin\.on\(|"
        r"for\s+await\s*\(\s*const\s+\w+\s+of\s+process\.stdin",
        text,
    )
    scan.reads_stdin = bool(reads) and "JSON.parse" in text
    for match in re.finditer(
        r"(process\.stdout\.write|console\.log|console\.info)\s*\(([^\n]*)", text
    ):
        target = scan.json_outputs if "JSON.stringify" in match.group(2) else scan.debug_outputs
        target.append(line_of(match.start()))
    for match in re.finditer(r"process\.stderr\.write\s*\(|console\.(?:error|warn)\s*\(", text):
        scan.stderr_writes.append(line_of(match.start()))
    for match in re.finditer(
        r"process\.exit\(\s*([1-9]\d*)\s*\)|process\.exitCode\s*=\s*[1-9]", text
    ):
        scan.error_exits.append(line_of(match.start()))
    for match in re.finditer(
        r"\b\w+(?:\.(\w+)|\[\s*['\"](\w+)['\"]\s*\])\s*(?:\?\?|\|\|)\s*" + _JS_LITERAL, text
    ):
        scan.defaults[match.group(1) or match.group(2)] = _js_value(match.group(3))
    for block in re.finditer(r"(?:const|let|var)\s*\{([^}]*)\}\s*=", text):
        for item in block.group(1).split(","):
            if "=" in item:
                name, _, value = item.partition("=")
                scan.defaults[name.split(":")[-1].strip()] = _js_value(value)
    for match in re.finditer(r"\b(?:args|params|input|data)\.(\w+)\b(?!\s*(?:\?\?|\|\|))", text):
        scan.defaults.setdefault(match.group(1), ("none", None))
    for match in re.finditer(r"\bif\s*\(([^)]*)\)", text):
        for word in re.findall(r"[A-Za-z_]\w*", match.group(1)):
            scan.guarded.add(word)
    for match in re.finditer(r"['\"](\w+)['\"]\s+in\s+\w+", text):
        scan.guarded.add(match.group(1))
    for match in re.finditer(
        r"require\(\s*['\"]([^'\"]+)['\"]\s*\)|from\s+['\"]([^'\"]+)['\"]", text
    ):
        module = match.group(1) or match.group(2)
        if module.startswith((".", "/")):
            continue
        module = module.removeprefix("node:").split("/")[0]
        scan.imports.setdefault(module, line_of(match.start()))
    return scan


__all__ = ["RUNTIMES", "TITLES", "LintItem", "lint_files", "lint_passed", "lint_tool"]
