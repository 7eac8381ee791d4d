"""Regex reading of a JavaScript script (a full parser is more than the checklist needs)."""

from __future__ import annotations

import json
import re
from typing import Any

from .scan import ScriptScan

_JS_LITERAL = (
    r"(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|true|false|null|\[[^\]]*\]|\{[^}]*\})"
)
_READS_STDIN = re.compile(
    r"readFileSync\(\s*(?:0|process\.stdin\.fd|['\"]/dev/stdin['\"])|process\.stdin\.on\(|"
    r"for\s+await\s*\(\s*const\s+\w+\s+of\s+process\.stdin"
)
_STDOUT = re.compile(r"(process\.stdout\.write|console\.log|console\.info)\s*\(([^\n]*)")
_STDERR = re.compile(r"process\.stderr\.write\s*\(|console\.(?:error|warn)\s*\(")
_ERROR_EXIT = re.compile(r"process\.exit\(\s*([1-9]\d*)\s*\)|process\.exitCode\s*=\s*[1-9]")
_FALLBACK = re.compile(
    r"\b\w+(?:\.(\w+)|\[\s*['\"](\w+)['\"]\s*\])\s*(?:\?\?|\|\|)\s*" + _JS_LITERAL
)
_DESTRUCTURING = re.compile(r"(?:const|let|var)\s*\{([^}]*)\}\s*=")
_PLAIN_READ = re.compile(r"\b(?:args|params|input|data)\.(\w+)\b(?!\s*(?:\?\?|\|\|))")
_IF_TEST = re.compile(r"\bif\s*\(([^)]*)\)")
_IN_TEST = re.compile(r"['\"](\w+)['\"]\s+in\s+\w+")
_IMPORT = re.compile(r"require\(\s*['\"]([^'\"]+)['\"]\s*\)|from\s+['\"]([^'\"]+)['\"]")


def scan_javascript(source: str) -> ScriptScan:
    """Read stdin use, outputs, exits, defaults, guards and imports from a JavaScript source."""
    scan = ScriptScan(runtime="node")
    text = _strip_comments(source)
    scan.reads_stdin = bool(_READS_STDIN.search(text)) and "JSON.parse" in text
    _read_outputs(text, scan)
    _read_defaults(text, scan)
    _read_guards(text, scan)
    _read_imports(text, scan)
    return scan


def _strip_comments(source: str) -> str:
    """Blank out comments, keeping line numbers."""
    source = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), source, flags=re.S)
    return re.sub(r"(?m)^\s*//.*$", "", source)


def _line_of(text: str, pos: int) -> int:
    """Return the 1-based line of a position in text."""
    return text.count("\n", 0, pos) + 1


def _value(text: str) -> tuple[str, Any]:
    """Read a JavaScript literal as JSON, or call it unknown."""
    text = text.strip()
    if text.startswith("'") and text.endswith("'"):
        text = json.dumps(text[1:-1].replace("\\'", "'"))
    try:
        return "literal", json.loads(text)
    except ValueError:
        return "unknown", None


def _read_outputs(text: str, scan: ScriptScan) -> None:
    """Note writes to stdout (JSON or not), to stderr, and non-zero exits, by line."""
    for match in _STDOUT.finditer(text):
        target = scan.json_outputs if "JSON.stringify" in match.group(2) else scan.debug_outputs
        target.append(_line_of(text, match.start()))
    for match in _STDERR.finditer(text):
        scan.stderr_writes.append(_line_of(text, match.start()))
    for match in _ERROR_EXIT.finditer(text):
        scan.error_exits.append(_line_of(text, match.start()))


def _read_defaults(text: str, scan: ScriptScan) -> None:
    """Note `x.y ?? literal` and destructuring defaults, then plain reads without one."""
    for match in _FALLBACK.finditer(text):
        scan.defaults[match.group(1) or match.group(2)] = _value(match.group(3))
    for block in _DESTRUCTURING.finditer(text):
        for item in block.group(1).split(","):
            if "=" in item:
                name, _, value = item.partition("=")
                scan.defaults[name.split(":")[-1].strip()] = _value(value)
    for match in _PLAIN_READ.finditer(text):
        scan.defaults.setdefault(match.group(1), ("none", None))


def _read_guards(text: str, scan: ScriptScan) -> None:
    """Note every word an `if` tests and every `"name" in obj` as a guarded parameter."""
    for match in _IF_TEST.finditer(text):
        scan.guarded.update(re.findall(r"[A-Za-z_]\w*", match.group(1)))
    for match in _IN_TEST.finditer(text):
        scan.guarded.add(match.group(1))


def _read_imports(text: str, scan: ScriptScan) -> None:
    """Note the first line each package is required or imported on."""
    for match in _IMPORT.finditer(text):
        module = match.group(1) or match.group(2)
        if module.startswith((".", "/")):
            continue
        module = module.removeprefix("node:").split("/")[0]
        scan.imports.setdefault(module, _line_of(text, match.start()))
