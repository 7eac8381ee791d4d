"""Regex reading of a JavaScript script (a full parser is more than the checklist needs)."""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator
from typing import Any

from .scan import ScriptScan

# The tool page lints on every view, in the web process, a script of up to 1 MB a member
# wrote. A pattern that scans to the end of the text from each of many starts before failing
# (`a.b ?? [` with no `]`, `if (` with no `)`) costs the square of the size. A default's
# literal is bounded (`{0,_SPAN}`: a longer one is not read, which only makes the checklist
# less sure); `if (...)` and `const {...} =` find their closing character once (`_enclosed`).
_SPAN = 400
_JS_LITERAL = (
    rf"(\"(?:[^\"\\]|\\.){{0,{_SPAN}}}\"|'(?:[^'\\]|\\.){{0,{_SPAN}}}'|-?\d+(?:\.\d+)?|true|false|null|"
    rf"\[[^\]]{{0,{_SPAN}}}\]|\{{[^}}]{{0,{_SPAN}}}\}})"
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
_DESTRUCTURING = re.compile(r"(?:const|let|var)\s*\{")  # then `[^}]*` `}` `\s*=`
_PLAIN_READ = re.compile(r"\b(?:args|params|input|data)\.(\w+)\b(?!\s*(?:\?\?|\|\|))")
_IF_TEST = re.compile(r"\bif\s*\(")  # then `[^)]*` `)`
_ASSIGNED = re.compile(r"\s*=")
_IN_TEST = re.compile(r"['\"](\w+)['\"]\s+in\s+\w+")
_IMPORT = re.compile(r"require\(\s*['\"]([^'\"]+)['\"]\s*\)|from\s+['\"]([^'\"]+)['\"]")


def scan_javascript(source: str) -> ScriptScan:
    """Read stdin use, outputs, exits, defaults, guards and imports from a JavaScript source."""
    scan = ScriptScan(runtime="node")
    text = _strip_comments(source)
    scan.reads_stdin = bool(_READS_STDIN.search(text)) and "JSON.parse" in text
    lines = _line_starts(text)
    _read_outputs(text, scan, lines)
    _read_defaults(text, scan)
    _read_guards(text, scan)
    _read_imports(text, scan, lines)
    return scan


def _strip_comments(source: str) -> str:
    """Blank out comments, keeping line numbers.

    Block comments are found with `str.find`, not a lazy `/\\*.*?\\*/`: that one scans to the
    end from every `/*` that is never closed. An unclosed one runs to the end, as in node.
    """
    parts: list[str] = []
    done = 0
    while (start := source.find("/*", done)) != -1:
        end = source.find("*/", start + 2)
        end = len(source) if end == -1 else end + 2
        parts += [source[done:start], "\n" * source.count("\n", start, end)]
        done = end
    parts.append(source[done:])
    # `[ \t]*`, not `\s*`: `\s` runs across line ends, from every line start of a long blank
    # stretch to its end (and blanked the line ends it crossed, moving later line numbers).
    return re.sub(r"(?m)^[ \t]*//.*$", "", "".join(parts))


def _enclosed(
    text: str, opener: re.Pattern[str], close: str, *, then: re.Pattern[str] | None = None
) -> Iterator[str]:
    """Yield what `opener` + `[^close]*` + `close` (+ `then`) would capture, in linear time.

    The same matches `re.finditer` gives for that pattern, but the next `close` after a
    point is looked up once and reused by every opener before it: the regular expression
    scanned from each opener to the end of the text when none came.
    """
    found = -1  # the first `close` at or after the last place looked from
    ends: dict[int, int] = {}  # where `then` ends after a `close` (-1: it does not follow)
    resume = 0
    for match in opener.finditer(text):
        start = match.end()
        if match.start() < resume:
            continue  # inside the last match: finditer never looks there
        if found < start:
            found = text.find(close, start)
            if found == -1:
                return  # no `close` after here: nothing later can match either
        end = found + 1
        if then is not None:
            if found not in ends:
                after = then.match(text, found + 1)
                ends[found] = after.end() if after is not None else -1
            end = ends[found]
            if end == -1:
                continue
        yield text[start:found]
        resume = end


def _line_starts(text: str) -> list[int]:
    """Return the position each line of text starts at, for `_line_of`."""
    return [0, *(m.end() for m in re.finditer("\n", text))]


def _line_of(lines: list[int], pos: int) -> int:
    """Return the 1-based line of a position, from the text's `_line_starts`.

    Not counted from the start of the text for each position: many matches made it quadratic.
    """
    return bisect.bisect_right(lines, pos)


def _value(text: str) -> tuple[str, Any]:
    """Read a JavaScript literal as JSON, or call it unknown."""
    text = text.strip()
    if text.startswith("'") and text.endswith("'"):
        text = json.dumps(text[1:-1].replace("\\'", "'"))
    try:
        return "literal", json.loads(text)
    except ValueError:
        return "unknown", None


def _read_outputs(text: str, scan: ScriptScan, lines: list[int]) -> None:
    """Note writes to stdout (JSON or not), to stderr, and non-zero exits, by line."""
    for match in _STDOUT.finditer(text):
        target = scan.json_outputs if "JSON.stringify" in match.group(2) else scan.debug_outputs
        target.append(_line_of(lines, match.start()))
    for match in _STDERR.finditer(text):
        scan.stderr_writes.append(_line_of(lines, match.start()))
    for match in _ERROR_EXIT.finditer(text):
        scan.error_exits.append(_line_of(lines, match.start()))


def _read_defaults(text: str, scan: ScriptScan) -> None:
    """Note `x.y ?? literal` and destructuring defaults, then plain reads without one."""
    for match in _FALLBACK.finditer(text):
        scan.defaults[match.group(1) or match.group(2)] = _value(match.group(3))
    for block in _enclosed(text, _DESTRUCTURING, "}", then=_ASSIGNED):
        for item in block.split(","):
            if "=" in item:
                name, _, value = item.partition("=")
                scan.defaults[name.split(":")[-1].strip()] = _value(value)
    for match in _PLAIN_READ.finditer(text):
        scan.defaults.setdefault(match.group(1), ("none", None))


def _read_guards(text: str, scan: ScriptScan) -> None:
    """Note every word an `if` tests and every `"name" in obj` as a guarded parameter."""
    for test in _enclosed(text, _IF_TEST, ")"):
        scan.guarded.update(re.findall(r"[A-Za-z_]\w*", test))
    for match in _IN_TEST.finditer(text):
        scan.guarded.add(match.group(1))


def _read_imports(text: str, scan: ScriptScan, lines: list[int]) -> None:
    """Note the first line each package is required or imported on."""
    for match in _IMPORT.finditer(text):
        module = match.group(1) or match.group(2)
        if module.startswith((".", "/")):
            continue
        module = module.removeprefix("node:").split("/")[0]
        scan.imports.setdefault(module, _line_of(lines, match.start()))
