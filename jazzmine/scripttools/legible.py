"""Refuse JavaScript tool code whose names a page draws otherwise than node reads them.

Python's rules (`jazzmine.core.tools.validator.legible`) hold for script.py; script.js needs
its own reading, since what is a name and what is a string is JavaScript's to say. Two ways a
name runs as another than the one an admin read:

- a letter beyond ASCII drawn like an ASCII one: below `const api_key = process.env.API_KEY`,
  a line `const аpi_key = "redacted"` (a Cyrillic `а`) reads as the secret overwritten, and the
  real key is sent; `ᵒrder` (a modifier letter) is drawn as `order` and is another name;
- an escape in a name: `\\u0061pi_key` is `api_key` to node, drawn as something else.

Text beyond ASCII stays welcome where it is drawn as it runs: strings (outside a template's
`${...}`, which is code), comments and regular expressions. What the parser cannot read (a
syntax error) is read as code: fail closed, since node would refuse it anyway.
"""

from __future__ import annotations

import functools
import re
import unicodedata

import tree_sitter_javascript
from tree_sitter import Language, Node, Parser

# Leaves whose text is drawn as it runs: a string's characters, a comment, a pattern.
_TEXT = frozenset(
    {"string_fragment", "escape_sequence", "comment", "html_comment", "regex_pattern",
     "hash_bang_line", "jsx_text"}
)  # fmt: skip
_NAME = frozenset(
    {"identifier", "property_identifier", "shorthand_property_identifier",
     "shorthand_property_identifier_pattern", "private_property_identifier",
     "statement_identifier"}
)  # fmt: skip
_ESCAPE = re.compile(r"\\u(?:\{([0-9A-Fa-f]+)\}|([0-9A-Fa-f]{4}))")


@functools.cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_javascript.language()))


def javascript_names_read_otherwise(source: str) -> list[tuple[int, str]]:
    """Return (line, problem) for each line of JavaScript whose code a page draws otherwise.

    ASCII code without `\\u` has nothing to find (the common case, and no parse).
    """
    if source.isascii() and "\\u" not in source:
        return []
    found: dict[int, str] = {}
    tree = _parser().parse(source.encode("utf-8"))
    stack: list[Node] = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.child_count:
            stack.extend(node.children)
            continue
        problem = _problem(node)
        if problem:
            found.setdefault(node.start_point.row + 1, problem)
    return sorted(found.items())


def _problem(leaf: Node) -> str:
    """Say what is wrong with one leaf of the tree ("" when it is drawn as it runs)."""
    if leaf.type in _TEXT:
        return ""
    text = (leaf.text or b"").decode("utf-8", "replace")
    if leaf.type in _NAME and "\\" in text:
        return (
            f"the name {text!r} is spelt with an escape, and node reads it as "
            f"{_unescaped(text)!r}: a page draws it as another name than the one that runs. "
            "Write names in plain ASCII letters"
        )
    beyond = next((char for char in text if not char.isascii()), None)
    if beyond is None:
        return ""
    named = f"U+{ord(beyond):04X} ({unicodedata.name(beyond, 'a character')})"
    if leaf.type in _NAME:
        return (
            f"the name {text!r} has a letter beyond ASCII, {named}, which a page can draw "
            "like another name's. Use ASCII names; other text belongs in strings"
        )
    return (
        f"{named} stands in the code outside any string or comment, where a page can draw "
        "it like another character. Use ASCII code; other text belongs in strings"
    )


def _unescaped(name: str) -> str:
    def char(match: re.Match[str]) -> str:
        code = int(match.group(1) or match.group(2), 16)
        return chr(code) if code <= 0x10FFFF else match.group()

    return _ESCAPE.sub(char, name)
