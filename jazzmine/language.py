"""Tell a script written in the other language: Python where bash is expected, or bash for Python.

LLMs asked for one language sometimes answer in the other. Each language's own parser decides:
a text is flagged only when the expected language's parser refuses it and the other one's
accepts it (or a shebang / code fence names the other language and the expected parser
refuses it), so a script that could run is never flagged. No Django here.
"""

from __future__ import annotations

import ast
import re
from typing import Literal

Language = Literal["python", "bash"]

_NAMES: dict[str, str] = {"python": "Python", "bash": "bash"}
_SHEBANG = re.compile(r"\A\s*#!\s*\S*?(?:/env\s+)?(?P<name>python[\d.]*|bash|sh|zsh)\b")
_FENCE = re.compile(r"^\s*```\s*(?P<name>python|py|bash|sh|shell|zsh)\s*$", re.MULTILINE)
# A line only Python writes: a keyword no shell has as a command, or an assignment spaced around
# its `=` (bash reads `total = 1` as running `total`). Text being typed in Python mode
# (`total = `, `from jazzmine import`) is a syntax error that bash's parser happens to accept:
# a line like these says it is half-written Python, not bash.
_PYTHON_LINE = re.compile(
    r"^[ \t]*(?:(?:def|class|import|from|with|try|except|finally|raise|assert|lambda|yield"
    r"|global|nonlocal|pass|async|await)\b"
    r"|[A-Za-z_][\w.]*(?:\[[^\]\n]*\])?[ \t]+(?:[-+*/%@&|^]|//|\*\*|<<|>>)?=(?!=))",
    re.MULTILINE,
)
_FENCE_NAMES: dict[str, Language] = {
    "python": "python", "py": "python", "bash": "bash", "sh": "bash", "shell": "bash",
    "zsh": "bash",
}  # fmt: skip


def parses_as_python(text: str) -> bool:
    """Tell whether Python's parser accepts the text."""
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def parses_as_bash(text: str) -> bool:
    """Tell whether bashkit's parser (the one that runs bash scripts here) accepts the text."""
    from bashkit import Bash  # the bash interpreter's own parser; nothing is executed

    try:
        Bash().analyze(text)
    except Exception:  # BashError, or a parser limit: either way it would not run
        return False
    return True


def _named_language(text: str) -> Language | None:
    """Return the language a shebang or a Markdown code fence names, if any."""
    match = _SHEBANG.match(text)
    if match:
        return "python" if match.group("name").startswith("python") else "bash"
    match = _FENCE.search(text)
    return _FENCE_NAMES[match.group("name")] if match else None


def written_in_other_language(text: str, expected: Language) -> Language | None:
    """Return the other language when the text is plainly that one instead of `expected`."""
    if not text.strip():
        return None
    other: Language = "bash" if expected == "python" else "python"
    parses = parses_as_python if expected == "python" else parses_as_bash
    if parses(text):
        return None  # it can run as what was asked for: never flag it
    named = _named_language(text)
    if named == other:
        return other
    if named is None:
        if other == "bash" and _PYTHON_LINE.search(text):
            return None  # Python still being written: its syntax error says what is wrong
        parses_other = parses_as_bash if other == "bash" else parses_as_python
        if parses_other(text):
            return other
    return None


def wrong_language_message(text: str, expected: Language) -> str | None:
    """Return a message for the editor when the text is in the other language, else None."""
    other = written_in_other_language(text, expected)
    if other is None:
        return None
    return (
        f"This looks like a {_NAMES[other]} script, but the playground is in "
        f"{_NAMES[expected]} mode: it cannot run as {_NAMES[expected]}. Switch the language "
        f"to {_NAMES[other]}, or ask for {_NAMES[expected]} again."
    )
