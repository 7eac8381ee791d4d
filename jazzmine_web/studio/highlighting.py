"""Syntax highlighting with pygments, shared by every page that shows code or prompts."""

from __future__ import annotations

from functools import cache

from django.utils.safestring import SafeString, mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import DiffLexer, JsonLexer, PythonLexer, TextLexer, XmlLexer

_LEXERS = {
    "python": PythonLexer,
    "xml": XmlLexer,
    "json": JsonLexer,
    "diff": DiffLexer,
    "text": TextLexer,
}


@cache
def _formatter(linenos: bool) -> HtmlFormatter:
    return HtmlFormatter(cssclass="highlight", linenos="table" if linenos else False, wrapcode=True)


def highlight_code(code: str, language: str, *, linenos: bool = False) -> SafeString:
    """Return code as highlighted HTML (pygments escapes the text)."""
    lexer = _LEXERS.get(language, TextLexer)(stripnl=False)
    return mark_safe(highlight(code, lexer, _formatter(linenos)))  # pygments escapes the text


@cache
def stylesheet() -> str:
    """Return the CSS for highlighted blocks."""
    return HtmlFormatter(style="friendly").get_style_defs(".highlight")
