"""Refuse text that a page draws otherwise than the interpreter reads it.

A reviewer approves the code the review page shows; the playground's editor shows the code
Run starts. With a character drawn as nothing, or one that moves the text around it, or a
name spelt with a letter that looks like another, what a person read is not what runs:
a form feed in a line's indentation resets Python's column to 0 (a call drawn inside an
`if` runs unconditionally); bidi controls draw code in another order than it runs (Trojan
Source); zero-width characters and line separators make text differ from what is shown;
`stаtus` (a Cyrillic `а`) and `status` are two names drawn alike. Shared by the Python
validator and the bash check, since both texts reach the same pages.
"""

from __future__ import annotations

import ast
import bisect
import re
import unicodedata
from collections.abc import Iterable

from ..types import UNSEEN_CANDIDATES as _CANDIDATES
from ..types import UNSEEN_CATEGORIES as _UNSEEN_CATEGORIES


def unseen_character(text: str) -> str | None:
    """Return the first character of text that no page draws as it is, or None."""
    for match in _CANDIDATES.finditer(text):
        if unicodedata.category(match.group()) in _UNSEEN_CATEGORIES:
            return match.group()
    return None


def character_named(char: str) -> str:
    """Return a character as a message names it: `U+200B (ZERO WIDTH SPACE)`."""
    kind = _UNSEEN_CATEGORIES.get(unicodedata.category(char), "a character")
    return f"U+{ord(char):04X} ({unicodedata.name(char, kind)})"


def unseen_characters(text: str) -> list[tuple[int, str]]:
    """Return (line, problem) for each line holding a character not drawn as it runs."""
    found: dict[int, str] = {}
    newlines: list[int] | None = None  # where lines end, found once a line is needed
    for match in _CANDIDATES.finditer(text):
        char = match.group()
        kind = _UNSEEN_CATEGORIES.get(unicodedata.category(char))
        if kind is None:
            continue
        if newlines is None:
            newlines = [m.start() for m in re.finditer("\n", text)]
        number = bisect.bisect_left(newlines, match.start()) + 1
        # One per line is enough to refuse, and to find.
        found.setdefault(
            number,
            f"the character {character_named(char)} is not "
            "allowed: a reviewer's page does not show it as it runs. Remove it, or write it "
            "as an escape inside a string",
        )
    return sorted(found.items())


def look_alike_names(tree: ast.AST, tool_names: Iterable[str] = ()) -> list[tuple[int, str]]:
    """Return (line, problem) for each line naming something in letters beyond ASCII.

    Names are read as the interpreter reads them (NFKC: a fullwidth `ｇet_orders` is
    `get_orders`, in the reading and the run alike). The sandbox's own tool names are the
    team's, shown by name in the review's list of tools, and stay callable whatever their
    letters; text beyond ASCII belongs in strings and comments, drawn as they run.
    """
    tools = frozenset(tool_names)
    lines: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) or not hasattr(node, "lineno"):
            continue
        for _field, value in ast.iter_fields(node):
            for name in value if isinstance(value, list) else [value]:
                if not isinstance(name, str) or name.isascii() or name in tools:
                    continue
                letter = next(char for char in name if not char.isascii())
                lines.setdefault(
                    node.lineno,
                    f"the name {name!r} has a letter beyond ASCII (U+{ord(letter):04X} "
                    f"{unicodedata.name(letter, '')}), which a reviewer's page can draw like "
                    "another name's. Use ASCII names; other text belongs in strings",
                )
    return sorted(lines.items())
