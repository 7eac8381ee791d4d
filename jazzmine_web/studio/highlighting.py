"""Syntax highlighting with pygments, shared by every page that shows code or prompts."""

from __future__ import annotations

from functools import cache

from django.utils.safestring import SafeString, mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import BashLexer, DiffLexer, JsonLexer, PythonLexer, TextLexer, XmlLexer

_LEXERS = {
    "python": PythonLexer,
    "bash": BashLexer,
    "xml": XmlLexer,
    "json": JsonLexer,
    "diff": DiffLexer,
    "text": TextLexer,
}


@cache
def _formatter(linenos: bool, marked: tuple[int, ...] = ()) -> HtmlFormatter:
    return HtmlFormatter(
        cssclass="highlight",
        linenos="table" if linenos else False,
        hl_lines=list(marked),
        wrapcode=True,
    )


def highlight_code(
    code: str, language: str, *, linenos: bool = False, marked: list[int] | None = None
) -> SafeString:
    """Return code as highlighted HTML (pygments escapes the text), marking some lines."""
    lexer = _LEXERS.get(language, TextLexer)(stripnl=False)
    formatter = _formatter(linenos, tuple(sorted(set(marked or ()))))
    return mark_safe(highlight(code, lexer, formatter))  # pygments escapes the text


@cache
def stylesheet() -> str:
    """Return the CSS for highlighted blocks."""
    return HtmlFormatter(style="friendly").get_style_defs(".highlight")
