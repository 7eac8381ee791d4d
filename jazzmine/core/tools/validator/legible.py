"""Refuse text that a page draws otherwise than the interpreter reads it.

A reviewer approves the code the review page shows; the playground's editor shows the code
Run starts. With a character drawn as nothing, or one that moves the text around it, or a
name spelt with a letter that looks like another, what a person read is not what runs:
a form feed in a line's indentation resets Python's column to 0 (a call drawn inside an
`if` runs unconditionally); bidi controls draw code in another order than it runs (Trojan
Source); zero-width characters and line separators make text differ from what is shown;
`stаtus` (a Cyrillic `а`) and `status` are two names drawn alike, and `ᵒrder_id` (a
modifier letter) is drawn as a name of its own but runs as `order_id` (Python reads names
in NFKC). Shared by the Python validator and the bash check, since both texts reach the
same pages.
"""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
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

    Names as the interpreter reads them (after NFKC); `names_read_otherwise` refuses those
    whose spelling NFKC changes. The sandbox's own tool names are the team's, shown by name
    in the review's list of tools, and stay callable whatever their letters; text beyond
    ASCII belongs in strings and comments, drawn as they run.
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


def names_read_otherwise(text: str, tool_names: Iterable[str] = ()) -> list[tuple[int, str]]:
    """Return (line, problem) for each line whose code holds a character Python reads otherwise.

    Python reads every name in NFKC: `ᵒrder_id`, `ｏrder_id` and `order_id` are one
    variable, which a page draws as three, so a reviewer reads `order_id = "ORD-1001"` and
    the line `ᵒrder_id = "ORD-1003"` below it as two (the run cancels ORD-1003). The
    parsed tree holds the names already normalised, so the source's tokens are read: names
    and the rest of the code, and f-strings whole (their fields are code, which a tokenizer
    of Python 3.11 does not split out). Plain strings and comments keep any text. A sandbox's
    tool, spelt exactly as named, is its own name. Text no tokenizer reads is read whole.
    """
    if unicodedata.is_normalized("NFKC", text):
        # No character of it reads otherwise (the common case: other alphabets in strings
        # and comments), so its tokens need no reading, which is the slow part.
        return []
    tools = frozenset(tool_names)
    found: dict[int, str] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        tokens = [tokenize.TokenInfo(tokenize.OP, text, (1, 0), (1, 0), text)]
    for token in tokens:
        if token.string.isascii() or token.type == tokenize.COMMENT:
            continue
        if token.type == tokenize.STRING and "f" not in _prefix(token.string):
            continue
        if token.type == tokenize.NAME and token.string in tools:
            continue
        for offset, char in enumerate(token.string):
            if not char.isascii() and unicodedata.normalize("NFKC", char) != char:
                line = token.start[0] + token.string.count("\n", 0, offset)
                found.setdefault(line, _read_otherwise(token, char))
                break
    return sorted(found.items())


def _prefix(literal: str) -> str:
    """Return a string literal's prefix, lowercased (`rb`, `f`, `Rf`...)."""
    return literal[: len(literal) - len(literal.lstrip("rRbBuUfF"))].lower()


def _read_otherwise(token: tokenize.TokenInfo, char: str) -> str:
    named = f"U+{ord(char):04X} ({unicodedata.name(char, 'a character')})"
    if token.type == tokenize.NAME:
        return (
            f"the name {token.string!r} is spelt with a letter beyond ASCII, {named}, and "
            "Python reads it as "
            f"{unicodedata.normalize('NFKC', token.string)!r}: a reviewer's page draws it as "
            "another name than the one that runs. Use ASCII names; other text belongs in "
            "strings and comments"
        )
    if token.type == tokenize.STRING:
        return (
            f"the character {named}, beyond ASCII, in an f-string, whose fields Python reads "
            "as code, with names in another form than a page draws them. Write it as an escape "
            f"('\\N{{{unicodedata.name(char, '...')}}}') or in a plain string"
        )
    return (
        f"the character {named}, beyond ASCII, in code, which Python reads as "
        f"{unicodedata.normalize('NFKC', char)!r}: a reviewer's page draws it otherwise. "
        "Use ASCII in code; other text belongs in strings and comments"
    )
