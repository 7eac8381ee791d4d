"""Show text from outside with every character that a page draws as nothing made visible.

A script's output, an agent's task and its name reach people who decide on them: the run pane,
the review page, the queue. Scripts themselves are refused when they hold such characters
(`core.tools.validator.legible`); output and tasks cannot be refused, they are what happened.
Shown as they are, a right-to-left override draws a line in another order than it was
written (`order #1‮00.005$ refund` reads as a small refund), a zero-width space makes two texts
that differ look alike, and control characters (terminal escapes, a form feed) vanish. Each is
written as its JSON escape instead, `\\u202e`, which inside pretty-printed JSON is also exactly
what the JSON means. Tabs, newlines and carriage returns stay: output is made of them.
"""

from __future__ import annotations

import re

# C0 controls but tab, newline and carriage return; DEL and the C1 controls; the bidi marks,
# embeddings, overrides and isolates; zero-width space, word joiner, the invisible operators
# and byte-order mark; the line and paragraph separators; the tag characters, which spelt a
# whole sentence drawn as nothing. Joiners (U+200C, U+200D) stay: emoji and scripts need them.
_UNSEEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u2028\u2029"
    "\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)


def _escape(char: str) -> str:
    """Return a character's JSON escape: a pair of surrogates' beyond the first plane."""
    point = ord(char)
    if point <= 0xFFFF:
        return f"\\u{point:04x}"
    point -= 0x10000
    return f"\\u{0xD800 + (point >> 10):04x}\\u{0xDC00 + (point & 0x3FF):04x}"


def visible(text: str) -> str:
    """Return `text` with each character drawn as nothing written as its `\\uXXXX` escape."""
    if _UNSEEN.search(text) is None:
        return text
    return _UNSEEN.sub(lambda m: _escape(m[0]), text)
