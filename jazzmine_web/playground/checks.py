"""Live checks of the editor's text and of an LLM's answer, off the server's event loop.

Django-free on purpose: big texts are checked in the checker process (`studio.checker`), which
imports only the modules of what it runs. `ast.parse` holds the GIL for its whole run (a
200 KB paste: a few hundred ms), so a worker thread alone would still stall every socket of
the web process; small texts (what typing sends) stay on a thread, where they cost a
millisecond or two.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, TypedDict

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import BashLexer, PythonLexer

from jazzmine.bash.commands import unknown_commands
from jazzmine.bash.generator import check_script
from jazzmine.core.tools import validate_script
from jazzmine.language import Language, wrong_language_message

from ..runs.reading import reader_call
from ..studio import checker
from ..studio.checker import CheckerUnavailable, checked, checked_off_loop
from ..studio.drawn import comments_that_run

checker.preload(__name__)
_LINE = re.compile(r"^Line (\d+): ")
_LEXER = PythonLexer(stripnl=False, ensurenl=False)
_BASH_LEXER = BashLexer(stripnl=False, ensurenl=False)
_SPANS = HtmlFormatter(nowrap=True)


class Violation(TypedDict):
    """One violation as the editor marks it."""

    line: int | None
    message: str


# A socket's frame holds at most 1 MiB (daphne's default): a bigger answer is never sent, and the
# editor waited for it with Run disabled for good. Highlighting makes ~15 bytes of markup of a
# character of dense code, so a 155 KB paste made 2.3 MB. Past this, the editor keeps the plain
# text it already shows; past so many violations, the rest are counted, not listed.
MAX_HIGHLIGHT_CHARS = 600_000
MAX_VIOLATIONS_SHOWN = 200


@dataclass(frozen=True)
class EditorCheck:
    """What the editor shows for one version of its text (`html` None: the plain text)."""

    violations: list[Violation]
    html: str | None


def _highlighted(body: str, lexer: PythonLexer | BashLexer) -> str | None:
    html = highlight(body, lexer, _SPANS)
    return html if len(html) <= MAX_HIGHLIGHT_CHARS else None


def _listed(violations: list[Violation]) -> list[Violation]:
    if len(violations) <= MAX_VIOLATIONS_SHOWN:
        return violations
    more = len(violations) - MAX_VIOLATIONS_SHOWN
    return [
        *violations[:MAX_VIOLATIONS_SHOWN],
        {"line": None, "message": f"... and {more:,} more violations below these"},
    ]


def violations_by_line(messages: list[str]) -> list[Violation]:
    """Split the validator's `Line N: ...` strings into line numbers and messages."""
    out: list[Violation] = []
    for message in messages:
        match = _LINE.match(message)
        out.append({"line": int(match.group(1)) if match else None, "message": message})
    return out


def _language_violations(body: str, expected: Language) -> list[Violation]:
    """Say first when the text is the other language (an LLM answering in the wrong one)."""
    message = wrong_language_message(body, expected)
    return [{"line": None, "message": message}] if message else []


def python_check(body: str, tool_names: list[str]) -> EditorCheck:
    """Validate a Python body as typed and highlight it; never runs it."""
    # The body is checked as written: its line numbers are the editor's line numbers.
    violations = violations_by_line(validate_script(body, tool_names)) if body.strip() else []
    if any(": syntax error" in v["message"] for v in violations):
        # Only a text Python's parser refuses can be bash instead (no second parse otherwise).
        violations = _language_violations(body, "python") + violations
    return EditorCheck(violations=_listed(violations), html=_highlighted(body, _LEXER))


def bash_check(body: str, max_chars: int, tool_names: list[str]) -> EditorCheck:
    """Check a bash body lightly and highlight it; bashkit is the real wall when it runs."""
    violations = violations_by_line(check_script(body, max_chars=max_chars)) if body.strip() else []
    if not violations and body.strip():
        violations = _language_violations(body, "bash") or violations_by_line(
            unknown_commands(body, tool_names) or comments_that_run(body)
        )
    return EditorCheck(violations=_listed(violations), html=_highlighted(body, _BASH_LEXER))


async def check_off_loop(
    *, language: str, body: str, tool_names: list[str], max_bash_chars: int
) -> EditorCheck:
    """Check a text without blocking the event loop; big texts go to the checker process.

    A checker process that cannot answer (killed, out of time) leaves the text unchecked,
    shown plain with a violation saying so: it is never parsed here instead.
    """
    if language == "bash":
        args: tuple[object, ...] = (bash_check, body, max_bash_chars, tool_names)
    else:
        args = (python_check, body, tool_names)
    try:
        return await checked_off_loop(len(body), *args)  # type: ignore[arg-type]
    except CheckerUnavailable as exc:
        return EditorCheck(violations=[{"line": None, "message": str(exc)}], html=None)


class CheckedGenerator:
    """A loop's script generator whose reading of a big answer happens in the checker process.

    The orchestrator reads an LLM's answer with `answer_body`, `assemble_script` and `validate`
    (on a thread, off its event loop, but still in the web process and under its GIL): here
    each one is the generator's own method, called on a copy of it that pickles (`reader`,
    `runs.reading.answer_reader`), in the checker process once the text is big. Everything
    else is the generator's. `CheckerUnavailable` ends the loop: its answer is not recorded.
    """

    def __init__(self, generator: Any, reader: Any) -> None:
        self.generator = generator
        self.reader = reader

    def __getattr__(self, name: str) -> Any:
        if name in ("generator", "reader"):  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.generator, name)

    def answer_body(self, answer: str) -> str:
        """Return the body an LLM's answer holds."""
        return checked(len(answer), reader_call, self.reader, "answer_body", answer)

    def assemble_script(self, body: str, sandbox_name: str) -> str:
        """Return the script that runs for a body."""
        return checked(len(body), reader_call, self.reader, "assemble_script", body, sandbox_name)

    def validate(self, script: str, sandbox_name: str) -> list[str]:
        """Return the violations of a script."""
        return checked(len(script), reader_call, self.reader, "validate", script, sandbox_name)
