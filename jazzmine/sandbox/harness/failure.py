"""Explain a script's failure as the data of an error event, in the lines the LLM wrote."""

from __future__ import annotations

from typing import Any

from .protocol import MAX_ERROR_CHARS, SCRIPT_FILENAME
from .refs import _extract_tb, _format_exception


class ScriptFailure:
    """Explain a script's exception with line numbers of the body the LLM wrote."""

    def __init__(self, script: str, body_offset: int, tool_files: dict[str, str]) -> None:
        self.lines = script.splitlines()
        self.offset = body_offset
        self.tool_files = tool_files

    def _code(self, assembled_line: int) -> str:
        if 1 <= assembled_line <= len(self.lines):
            return self.lines[assembled_line - 1].strip()
        return ""

    def syntax(self, exc: SyntaxError) -> dict[str, Any]:
        """Describe a script that does not compile."""
        line = (exc.lineno or 0) - self.offset
        code = self._code(exc.lineno or 0)
        message = f"SyntaxError at line {line} of the script: {exc.msg}"
        if code:
            message += f"\n    {code}"
        return error_data("SyntaxError", message, line=line, trace=message)

    def runtime(self, exc: BaseException) -> dict[str, Any]:
        """Describe an exception raised while the script ran."""
        frames = ["Traceback (most recent call last):"]
        last_line: int | None = None
        last_code = ""
        for frame in _extract_tb(exc.__traceback__):
            if frame.filename == SCRIPT_FILENAME:
                line = (frame.lineno or 0) - self.offset
                where = "the script" if frame.name == "<module>" else f"{frame.name}()"
                code = self._code(frame.lineno or 0)
                frames.append(f"  Line {line}, in {where}")
                if code:
                    frames.append(f"    {code}")
                last_line, last_code = line, code
            elif frame.filename in self.tool_files:
                frames.append(
                    f"  Tool {self.tool_files[frame.filename]!r}, line {frame.lineno}, "
                    f"in {frame.name}()"
                )
        summary = _format_exception(type(exc), exc, None)[-1].strip()
        frames.append(summary)
        message = summary + _hint(exc)
        if last_line is not None:
            message += f" (line {last_line} of the script"
            message += f": {last_code})" if last_code else ")"
        return error_data(type(exc).__name__, message, line=last_line, trace="\n".join(frames))


def error_data(
    exception: str, message: str, *, line: int | None = None, trace: str = ""
) -> dict[str, Any]:
    """Return the data of a script-error event, its texts cut to what a person reads."""
    return {
        "kind": "script_error",
        "exception": _cut(exception),
        "line": line,
        "message": _cut(message),
        "traceback": _cut(trace),
    }


def _cut(text: str) -> str:
    if len(text) <= MAX_ERROR_CHARS:
        return text
    return f"{text[:MAX_ERROR_CHARS]}... ({len(text) - MAX_ERROR_CHARS} more characters cut)"


def _hint(exc: BaseException) -> str:
    """Add a sentence for the mistakes scripts make most often in the sandbox."""
    if isinstance(exc, ImportError) and "__import__" in str(exc):
        return (
            "; imports are not allowed in the sandbox: json, time, math, re and datetime are "
            "already available"
        )
    if isinstance(exc, NameError):
        return "; only the listed tools, helpers, modules and safe builtins exist in the sandbox"
    if isinstance(exc, MemoryError):
        return "; the script ran out of memory"
    return ""
