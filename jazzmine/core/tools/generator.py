"""ScriptGenerator: prompts for the LLM, assembly of its answer, and static validation."""

from __future__ import annotations

import ast
import re

from . import prompts
from .registry import ToolRegistry
from .safety import EMIT_HELPERS
from .validator import validate_script

# A fenced block anywhere in the answer: LLMs wrap code in ```python ... ``` despite being told.
# Lines may end "\r\n" (an answer typed or sent from Windows): its fence is a fence too.
_FENCE = re.compile(r"```[ \t]*[\w+-]*[ \t]*\r?\n(.*?)(?:\r?\n[ \t]*```|\Z)", re.DOTALL)
# `KeyError: 0`, `KeyError: '0'` and friends in a traceback or message.
_KEY_ERROR = re.compile(r"KeyError:\s*(?P<key>'[^'\n]*'|\"[^\"\n]*\"|-?\d+)")
BODY_MARKER = "# --- script body ---"


def plain_newlines(text: str) -> str:
    """Return text with every line ending a plain `\\n`: the lines every page draws.

    Pages, editors and Python read a lone `\\r` as a line's end; bash reads it as part of the
    line: `# note\\recho RAN` is one comment to bash, drawn as a comment and a command. So
    what is stored, checked, shown and run has only `\\n` (a browser's form sends `\\r\\n`).
    """
    return text.replace("\r\n", "\n").replace("\r", "\n")


def strip_fences(text: str) -> str:
    """Return the code inside Markdown fences, or the text itself when it has none."""
    match = _FENCE.search(text)
    body = match.group(1) if match else text
    return body.strip("\r\n")


def python_body(answer: str) -> str:
    """Return the Python code an answer holds: all of it when it is a program, else its fence's.

    The seed strips the first fence found anywhere. In a text that is a program of its own,
    that fence can only be inside a string literal or a comment, and taking it would run text
    the program never runs while a reviewer reads the program. So a text that parses runs as
    written; only one that does not (prose around a fence, a bare fence) has its fence taken.
    A program keeps its leading blank lines: each line of the body is the line of that number
    as sent, in every error and violation (cut, an error on line 6 of what an agent sent
    said line 4, and the run page drew line 4 beside it).
    """
    text = answer.rstrip("\n")
    return text if _parses(text) else strip_fences(answer)


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # NUL, or absurdly deep
        return False
    return True


def assembled_body(script: str) -> str:
    """Return the body of an assembled script, as it runs (the text itself when not assembled)."""
    _head, marker, body = script.partition(BODY_MARKER + "\n")
    return body if marker else script


def script_body(script: str, language: str) -> str:
    """Return the body of a stored script of `language`, as a person reads what runs.

    Only a Python script is assembled (a preamble, then the marker): a bash script is all
    body, and a line in it that reads like the marker is the agent's own. Cut there, a
    reviewer read, approved and ran only what followed it.
    """
    return assembled_body(script) if language == "python" else script


def failed_attempt(
    attempt: int, previous_script: str | None, previous_error: str | None
) -> dict[str, int | str]:
    """Return how a retry prompt quotes the attempt that failed: its number, script and error.

    Python and bash retries quote it the same way: an empty script or error is named, not blank;
    each between tags (`prompts.QUOTED_ATTEMPT`) that no text inside can close or open again.
    """
    script = _quoted((previous_script or "(none)").strip("\n"))
    error = _quoted((previous_error or "(no error text)").strip("\n"))
    return {
        "previous_attempt": attempt - 1,
        "quoted_attempt": prompts.QUOTED_ATTEMPT.format(
            previous_script=script, previous_error=error
        ),
    }


# A tag of the quoted attempt, opening or closing, however spelt (`< / ERROR >`).
_QUOTE_TAG = re.compile(r"<(\s*/?\s*)(previous_script|error)(?=[\s>/])", re.IGNORECASE)


def _quoted(text: str) -> str:
    """Return text to quote between the attempt's tags: any of those tags in it written
    `<\\/error>`-like, broken by a backslash, so that it can neither end its block early
    nor start another (a script's own `"<error>"` string reads as it was, but for that)."""
    return _QUOTE_TAG.sub(lambda m: "<\\" + m.group(1) + m.group(2), text)


def retry_hint(previous_error: str | None) -> str:
    """Return the targeted hint for an error, or an empty string."""
    if not previous_error:
        return ""
    match = _KEY_ERROR.search(previous_error)
    if match:
        key = match.group("key")
        if key.lstrip("-").isdigit():
            return prompts.KEY_ERROR_HINT.format(key=key)
        return prompts.MISSING_KEY_HINT.format(key=key)
    if "is forbidden" in previous_error or "violation" in previous_error.lower():
        return prompts.VIOLATION_HINT
    return ""


class ScriptGenerator:
    """Build prompts, assemble scripts and validate them for one registry; stateless."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def build_prompt(
        self,
        task: str,
        sandbox_name: str,
        previous_script: str | None = None,
        previous_error: str | None = None,
        attempt: int = 1,
    ) -> str:
        """Return the prompt for an attempt: the rules on the first, the failure on retries."""
        tools = self.registry.build_tools_prompt(sandbox_name)
        if attempt <= 1:
            return prompts.SYSTEM_PROMPT.format(tools=tools, task=task.strip())
        return prompts.RETRY_PROMPT.format(
            task=task.strip(),
            tools=tools,
            hint=retry_hint(previous_error),
            **failed_attempt(attempt, previous_script, previous_error),
        )

    def preamble(self, sandbox_name: str) -> str:
        """Return the comment block that heads every assembled script."""
        names = ", ".join(self.registry.tool_names(sandbox_name)) or "(none)"
        return (
            f"# jazzmine script for sandbox {sandbox_name!r}\n"
            f"# tools: {names}\n"
            f"# helpers: {', '.join(EMIT_HELPERS)}\n"
            "# modules: json, time, math, re, datetime\n"
            f"{BODY_MARKER}\n"
        )

    @staticmethod
    def answer_body(answer: str) -> str:
        """Return the body an LLM's answer holds (its code, without Markdown around it)."""
        return python_body(answer)

    def assemble_script(self, body: str, sandbox_name: str) -> str:
        """Wrap an LLM's answer into the executable file: preamble, body, postamble."""
        return f"{self.preamble(sandbox_name)}{self.answer_body(body)}\n"

    def validate(self, script: str, sandbox_name: str) -> list[str]:
        """Return the violations of a script against this sandbox's tools."""
        return validate_script(script, self.registry.tool_names(sandbox_name))

    @staticmethod
    def body_line_offset(script: str) -> int:
        """Return how many lines of an assembled script precede its body (`body_numbered`)."""
        return body_offset(script)

    @staticmethod
    def validation_error_message(violations: list[str]) -> str:
        """Return the violations as one message an LLM can act on."""
        if not violations:
            return ""
        lines = "\n".join(f"- {v}" for v in violations)
        return (
            f"The script was rejected with {len(violations)} violation(s):\n{lines}\n"
            "Fix every line listed and return the whole corrected script."
        )


_LINE = re.compile(r"^Line (\d+):")


def body_numbered(violations: list[str], offset: int) -> list[str]:
    """Return violations of an assembled script with each `Line N:` counted in its body.

    People and LLMs see the body, not the preamble: a violation on line 8 of the script is
    on line 3 of what they wrote.
    """
    if not offset:
        return list(violations)
    return [
        _LINE.sub(lambda m: f"Line {max(1, int(m[1]) - offset)}:", v, count=1) for v in violations
    ]


def body_offset(script: str) -> int:
    """Return how many lines precede the body in an assembled script (0 when not assembled)."""
    head, marker, _ = script.partition(BODY_MARKER + "\n")
    return head.count("\n") + 1 if marker else 0
