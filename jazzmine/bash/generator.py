"""The ScriptGenerator's interface for bash: bashkit's prompt, fences stripped, a light check.

The orchestrator's loop (generate → check → run → retry) only needs `build_prompt`,
`assemble_script`, `validate` and `validation_error_message`, so bash scripts go through the
same loop as Python ones. The check is light on purpose: bashkit's logic-only interpreter,
its limits and the sandbox are the walls; this refuses only what can never be a script, and
what would hide from the run that it hit one of bashkit's limits (`blindspots`): such a script
is told now, not run to an end that a failure then contradicts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from jazzmine.core.tools import ScriptGenerator, failed_attempt, strip_fences
from jazzmine.core.tools.validator.legible import unseen_characters

from . import system_prompt
from .blindspots import limit_blind_spot
from .commands import unknown_commands
from .engine import BashLimits, ToolSpec
from .heredocs import heredoc_divergences

DEFAULT_MAX_CHARS = 100_000

RETRY = """\
Your previous bash script for this task failed (attempt {previous_attempt}). Fix it and return
a corrected script.

{quoted_attempt}

Return the corrected bash script only: no markdown, no code fences, no explanations.
"""


def script_problems(body: str, *, max_chars: int, tools: Iterable[str]) -> list[str]:
    """Return why a bash body cannot run here: the light check's problems, else the commands
    nothing answers to (neither a tool of `tools` nor one of bash's).

    One check for every way a script comes in (the editor, Auto, the API, the playground's
    Run): a call of a name that is no tool fails with exit 127 where it runs, and a reading
    made before a tool of that name exists would not show a reviewer that call.
    """
    return check_script(body, max_chars=max_chars) or unknown_commands(body, tools)


def check_script(body: str, *, max_chars: int = DEFAULT_MAX_CHARS) -> list[str]:
    """Return why a bash body can never run (empty, too long, binary), or nothing."""
    if not isinstance(body, str) or not body.strip():
        return ["Line 1: the bash script is empty"]
    if len(body) > max_chars:
        return [f"Line 1: the bash script is {len(body)} characters long (limit {max_chars})"]
    if "\x00" in body:
        line = body[: body.index("\x00")].count("\n") + 1
        return [f"Line {line}: the bash script holds a NUL character"]
    # What a reviewer reads must be what runs, in bash as in Python.
    unseen = [f"Line {line}: {problem}." for line, problem in unseen_characters(body)]
    if unseen:
        return unseen
    joined = [
        f"Line {line}: the engine ends this here-document here, but bash joins this line to "
        "the one above (it ends in a backslash) and reads on, so what follows would read as "
        f"text and run as commands; take the backslash off, or quote the delimiter (<<'{word}')"
        for line, word in heredoc_divergences(body)
    ]
    if joined:
        return joined
    blind = limit_blind_spot(body)
    if blind is None:
        return []
    return [
        f"Line {_line_of(body, blind)}: {blind}; a limit hit there would go unreported, so a "
        "bash script may not do this"
    ]


# What a blind spot's reason names, searched for in the script to say on which line it is.
_NAMED = ("trap", "eval", "compgen", "complete", "coproc", "alias", "mapfile", "readarray")
# A command whose name is computed: an expansion (`$x`, `"$x"`, `${x}`, `$(...)`, a backquote)
# where a command starts (a line's start, after `;`, `&`, `|`, `(`, `{`, a keyword that runs
# a list, or assignments before the name).
_COMPUTED_NAME = re.compile(
    r"(?m)(?:^|[;&|({]|\b(?:then|do|else|elif|if|while|until|time|!))[ \t]*"
    r"(?:[A-Za-z_][A-Za-z0-9_]*=\S*[ \t]+)*[\"']?(?:\$|`)"
)


def _line_of(body: str, reason: str) -> int:
    """Return the line a blind spot is on: where its quoted text or its command is (else 1)."""
    found = None
    quoted = re.findall(r"`([^`]+)`", reason)
    if quoted:  # a redirection's line (cut with an ellipsis), or a command's name
        text = quoted[-1].removesuffix("…")
        words = re.fullmatch(r"[\w.-]+", text)
        found = re.search(rf"(?<![\w.-]){re.escape(text)}(?![\w.-])" if words else re.escape(text),
                          body)  # fmt: skip
    elif "computed at run time" in reason:
        found = _COMPUTED_NAME.search(body)
    else:
        for word in (w for w in _NAMED if w in reason.split(":")[0]):
            found = found or re.search(rf"\b{word}\b", body)
    return body.count("\n", 0, found.start()) + 1 if found else 1


class BashScriptGenerator:
    """Prompts and checks for bash scripts over one sandbox's tools."""

    validation_error_message = staticmethod(ScriptGenerator.validation_error_message)

    def __init__(
        self,
        specs: list[ToolSpec],
        *,
        limits: BashLimits | None = None,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> None:
        self.specs = specs
        self.limits = limits
        self.max_chars = max_chars
        self._system: str | None = None

    def system_prompt(self) -> str:
        """Return bashkit's prompt for the tool set (built once)."""
        if self._system is None:
            self._system = system_prompt(self.specs, limits=self.limits).rstrip()
        return self._system

    def build_prompt(
        self,
        task: str,
        sandbox_name: str,
        previous_script: str | None = None,
        previous_error: str | None = None,
        attempt: int = 1,
    ) -> str:
        """Return bashkit's prompt with the task, and the failure on retries."""
        prompt = (
            f"{self.system_prompt()}\n\nTask: {task.strip()}\n\n"
            "Return the bash script only: no markdown, no code fences, no explanations.\n"
        )
        if attempt > 1:
            prompt += "\n" + RETRY.format(
                **failed_attempt(attempt, previous_script, previous_error)
            )
        return prompt

    @staticmethod
    def answer_body(answer: str) -> str:
        """Return the body an LLM's answer holds: the code of its fence, if it has one."""
        return strip_fences(answer)

    def assemble_script(self, body: str, sandbox_name: str) -> str:
        """Return the script that runs: the answer without fences (bash runs as written)."""
        return self.answer_body(body) + "\n"

    @staticmethod
    def body_line_offset(script: str) -> int:
        """A bash script is all body: its lines are the lines as written."""
        return 0

    def validate(self, script: str, sandbox_name: str) -> list[str]:
        """Return the light check's problems, then the commands nothing answers to."""
        return script_problems(
            script, max_chars=self.max_chars, tools=[spec.name for spec in self.specs]
        )
