"""Syntax highlighting with pygments, shared by every page that shows code or prompts.

Pygments is pure Python: a big text keeps a thread of the web process busy for seconds (a
200,000-character script, about two), and every socket of that process waits its turn for
the GIL meanwhile (pings went from milliseconds to 0.1 s). Like a big script's parse, a big
text is highlighted in a process of its own (`studio.checker.coloured`: not the one that checks
scripts, which must not wait behind a page). One too big to be worth it, or that the process
cannot do, is shown as it is: escaped, not coloured.
"""

from __future__ import annotations

from functools import cache
from html import escape
from typing import Any

from django.utils.safestring import SafeString, mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import BashLexer, DiffLexer, JsonLexer, PythonLexer, TextLexer, XmlLexer

from . import checker

checker.preload(__name__)

_LEXERS = {
    "python": PythonLexer,
    "bash": BashLexer,
    "xml": XmlLexer,
    "json": JsonLexer,
    "diff": DiffLexer,
    "text": TextLexer,
}
# Longer texts are shown plain (every script is shorter; a script tool may not be): colouring
# one takes the colouring process seconds, which every other page's big code waits behind.
PLAIN_ABOVE_CHARS = 250_000


@cache
def _formatter(linenos: bool, marked: tuple[int, ...] = ()) -> HtmlFormatter:
    # Numbers inline, each in its line: the page wraps a long line (a reviewer must see all
    # of what runs; text pushed past the box by 400 spaces was read as not there), and a
    # wrapped line keeps its number, which a table's column of numbers would lose.
    return HtmlFormatter(
        cssclass="highlight",
        linenos="inline" if linenos else False,
        hl_lines=list(marked),
        wrapcode=True,
    )


def lexer_for(language: str) -> Any:
    """Return the lexer every page draws a language's code with (`studio.drawn` reads bash so)."""
    return _LEXERS.get(language, TextLexer)(stripnl=False)


def highlighted_html(code: str, language: str, linenos: bool, marked: tuple[int, ...]) -> str:
    """Return code as highlighted HTML (pygments escapes the text); no Django, for the checker."""
    return highlight(code, lexer_for(language), _formatter(linenos, marked))


def highlight_code(
    code: str, language: str, *, linenos: bool = False, marked: list[int] | None = None
) -> SafeString:
    """Return code as highlighted HTML (pygments escapes the text), marking some lines."""
    lines = tuple(sorted(set(marked or ())))
    if len(code) <= PLAIN_ABOVE_CHARS:
        try:
            html = checker.coloured(len(code), highlighted_html, code, language, linenos, lines)
            return mark_safe(html)  # pygments escapes the text
        except checker.CheckerUnavailable:
            pass  # shown plain: colour is no reason to refuse a page
    return mark_safe(
        f'<div class="highlight"><pre><code>{escape(code, quote=False)}</code></pre></div>'
    )


@cache
def stylesheet() -> str:
    """Return the CSS for highlighted blocks."""
    return HtmlFormatter(style="friendly").get_style_defs(".highlight")
