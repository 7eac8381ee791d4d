"""Live checks of the editor's text: validate and highlight, off the server's event loop.

Django-free on purpose: big texts are checked in a separate process that imports only this
module. `ast.parse` holds the GIL for its whole run (a 200 KB paste: a few hundred ms), so a
worker thread alone would still stall every socket of the web process; small texts (what
typing sends) stay on a thread, where they cost a millisecond or two.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import multiprocessing
import re
import threading
from dataclasses import dataclass
from typing import TypedDict

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import BashLexer, PythonLexer

from jazzmine.bash.generator import check_script
from jazzmine.core.tools import validate_script
from jazzmine.language import Language, wrong_language_message

# Texts longer than this are checked in the checker process.
PROCESS_THRESHOLD_CHARS = 20_000
_LINE = re.compile(r"^Line (\d+): ")
_LEXER = PythonLexer(stripnl=False, ensurenl=False)
_BASH_LEXER = BashLexer(stripnl=False, ensurenl=False)
_SPANS = HtmlFormatter(nowrap=True)


class Violation(TypedDict):
    """One violation as the editor marks it."""

    line: int | None
    message: str


@dataclass(frozen=True)
class EditorCheck:
    """What the editor shows for one version of its text."""

    violations: list[Violation]
    html: str


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
    return EditorCheck(violations=violations, html=highlight(body, _LEXER, _SPANS))


def bash_check(body: str, max_chars: int) -> EditorCheck:
    """Check a bash body lightly and highlight it; bashkit is the real wall when it runs."""
    violations = violations_by_line(check_script(body, max_chars=max_chars)) if body.strip() else []
    if not violations and body.strip():
        violations = _language_violations(body, "bash")
    return EditorCheck(violations=violations, html=highlight(body, _BASH_LEXER, _SPANS))


class _CheckerProcess:
    """One lazily started process for big texts, replaced if it dies."""

    def __init__(self) -> None:
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def pool(self) -> concurrent.futures.ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                # forkserver, not fork: the web process has threads (channel layer, run worker).
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload([__name__])
                self._pool = concurrent.futures.ProcessPoolExecutor(1, mp_context=context)
                atexit.register(self._pool.shutdown, wait=False, cancel_futures=True)
            return self._pool

    def forget(self, broken: concurrent.futures.ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is broken:
                self._pool = None
        broken.shutdown(wait=False, cancel_futures=True)


_checker = _CheckerProcess()


async def check_off_loop(
    *, language: str, body: str, tool_names: list[str], max_bash_chars: int
) -> EditorCheck:
    """Check a text without blocking the event loop; big texts go to the checker process."""
    if language == "bash":
        args: tuple[object, ...] = (bash_check, body, max_bash_chars)
    else:
        args = (python_check, body, tool_names)
    if len(body) < PROCESS_THRESHOLD_CHARS:
        return await asyncio.to_thread(*args)  # type: ignore[arg-type]
    # Starting the process (the first time) and handing it the text both block: on a thread.
    pool = await asyncio.to_thread(_checker.pool)
    try:
        future = await asyncio.to_thread(pool.submit, *args)  # type: ignore[arg-type]
        return await asyncio.wrap_future(future)
    except concurrent.futures.BrokenExecutor:
        # The checker died (killed, out of memory): start a new one next time; check this
        # text on a thread so the editor still gets its answer.
        _checker.forget(pool)
        return await asyncio.to_thread(*args)  # type: ignore[arg-type]
