"""Name the commands a bash script calls that nothing here answers to: a typo, or a host tool.

bashkit's interpreter has no file system and none of the host's programs (`cat`, `curl`,
`python3` are "command not found"), and each tool is a builtin under its own name. A command
that is neither a tool, a function the script defines, nor one bashkit knows fails with exit
127 when the script reaches it: told before it runs, the author (or the LLM, in its retry
prompt) learns which names exist instead of reading a run's stderr.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .engine import shell_commands


def unknown_commands(body: str, tools: Iterable[str]) -> list[str]:
    """Return a `Line N: ...` problem for each command nothing answers to, in script order.

    Empty when bashkit cannot read the script (its own error says why, where it runs) or
    cannot say which commands it knows: this is a help, bashkit is the wall.
    """
    from bashkit import Bash  # the interpreter's own parser; nothing is executed

    try:
        analysis = Bash().analyze(body)
    except Exception:  # a parse error or a parser limit: told by the run itself
        return []
    tool_names = set(tools)
    defined = set(analysis.functions)
    candidates = [
        name for name in dict.fromkeys(analysis.command_names)
        if name not in tool_names and name not in defined
    ]  # fmt: skip
    if not candidates:
        return []
    try:
        known = shell_commands(tuple(sorted(candidates)))
    except RuntimeError:
        return []
    listed = ", ".join(sorted(tool_names)) or "none"
    found = [(_line_of(body, name), name) for name in candidates if name not in known]
    return [
        f"Line {line}: {name!r} is not a command here: neither a tool of this sandbox "
        f"({listed}) nor a command of bash's (it has no file system and none of the host's "
        "programs)"
        for line, name in sorted(found)
    ]


def _line_of(body: str, name: str) -> int:
    """Return the line where `name` first stands as a word of its own (else 1)."""
    lines = lines_naming(body, name)
    return lines[0] if lines else 1


def lines_naming(body: str, name: str) -> list[int]:
    """Return each line where `name` stands as a word of its own, in order, once each.

    A mention in a comment or a string counts too: a reader is pointed at one line too many,
    never at one too few.
    """
    found = re.finditer(rf"(?<![\w./-]){re.escape(name)}(?![\w./-])", body)
    return list(dict.fromkeys(body.count("\n", 0, match.start()) + 1 for match in found))
