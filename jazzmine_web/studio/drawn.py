"""What every page draws of a bash script as a comment must be a comment where it runs.

Pages colour bash with pygments' `BashLexer`, which starts a comment at a `#` wherever a new
token starts: after a closing quote, a `$var`, a `)`, an `=`, an escaped space. bash (and
bashkit, which runs the scripts) starts one only where `#` begins a word, so in
`echo "done"#; update_order_status --order_id ORD-3 --status cancelled` the call runs while
the review page draws it greyed out, as a comment. Rather than trust a second reading of bash
to agree with the first, bashkit itself judges: the script's commands must be the same with
every span the page draws as a comment taken out. A script where they are not is refused,
naming the line, before anyone is asked to read it.

No Django here: big scripts are checked in the checker process (`studio.checker`).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pygments.token import Comment

from .highlighting import lexer_for


@cache
def _lexer() -> Any:
    return lexer_for("bash")  # the very lexer the pages draw bash with


def _comments(body: str) -> list[tuple[int, int]]:
    """Return the (start, end) of each span drawn as a comment, its newline left out."""
    spans = []
    for start, token, text in _lexer().get_tokens_unprocessed(body):
        if token in Comment:
            kept = text.rstrip("\n")
            spans.append((start, start + len(kept)))
    return spans


def _commands(body: str) -> tuple[list[str], bool] | None:
    """Return bashkit's commands of a script (each as text) and whether it cut the list."""
    from bashkit import Bash  # the interpreter's own parser; nothing is executed

    try:
        analysis: Any = Bash().analyze(body)
    except Exception:
        return None  # unreadable to bashkit
    return [repr(command) for command in analysis.commands], bool(analysis.truncated)


def _without(body: str, spans: list[tuple[int, int]]) -> str:
    parts, at = [], 0
    for start, end in spans:
        parts.append(body[at:start])
        at = end
    parts.append(body[at:])
    return "".join(parts)


def _whole_line_or_after_blank(body: str, start: int) -> bool:
    """Tell whether a `#` starts a comment by its place alone: the first thing on its line, or
    after a space or tab that no backslash escapes (an even number of backslashes before it).
    """
    line_start = body.rfind("\n", 0, start) + 1
    if not body[line_start:start].strip():
        return True
    if body[start - 1] not in " \t":
        return False
    slashes = len(body[: start - 1]) - len(body[: start - 1].rstrip("\\"))
    return slashes % 2 == 0


def comments_that_run(body: str) -> list[str]:
    """Return a `Line N: ...` problem for the first span drawn as a comment that bash would run.

    The spans are told apart in a few readings, not one per comment (a script may hold
    thousands): the first span whose removal, with those before it, changes the script's
    commands is found by halving. With bashkit's list of commands cut short (over 4096
    commands) it cannot compare the whole script: a comment is then accepted only by its place
    (`_whole_line_or_after_blank`).
    """
    spans = _comments(body)
    if not spans:
        return []
    whole = _commands(body)
    if whole is None:
        return []  # bashkit cannot read it: the run fails saying why, and nothing runs
    commands, cut = whole
    if cut:
        found = next((s for s, _ in spans if not _whole_line_or_after_blank(body, s)), None)
    else:

        def keeps(count: int) -> bool:
            stripped = _commands(_without(body, spans[:count]))
            return stripped is not None and not stripped[1] and stripped[0] == commands

        found = None
        if not keeps(len(spans)):
            kept, changed = 0, len(spans)  # stripping `kept` spans keeps it, `changed` does not
            while changed - kept > 1:
                middle = (kept + changed) // 2
                kept, changed = (middle, changed) if keeps(middle) else (kept, middle)
            found = spans[changed - 1][0]
    if found is None:
        return []
    return [
        f"Line {body.count(chr(10), 0, found) + 1}: this `#` does not begin a word, so it starts "
        "no comment in bash: what follows it on the line runs, but the review page would show "
        "it as a comment. Put a space before the `#`, or quote it"
    ]
