"""Find the here-documents that bashkit ends where bash does not.

In a here-document with an unquoted delimiter, bash joins a line that ends in a backslash to
the next one, so a delimiter on that next line does not end it: the lines after are still
text. bashkit (0.20) ends it there, and runs them. A reviewer reading
`cat <<EOF` / `note \\` / `EOF` / `update_order_status ...` / `EOF` as bash reads a note; the run
calls the tool. Such a script is refused where it is checked. With a quoted delimiter
(`<<'EOF'`, `<<"EOF"`, `<<\\EOF`) bash reads the text as it is and both end on the same line.
"""

from __future__ import annotations

import re

# `<<WORD` or `<<-WORD` with a plain word (any quote in or after it makes the text literal);
# not a here-string (`<<<`).
# A `<<` in arithmetic (`$((1<<x))`) may pass for one: the check errs towards refusing.
_OPENER = re.compile(r"(?<!<)<<(-?)[ \t]*([A-Za-z_][A-Za-z0-9_]*)(?![\w'\"\\])")


def heredoc_divergences(body: str) -> list[tuple[int, str]]:
    """Return (line, delimiter) for each here-document bashkit ends on a line bash reads on."""
    found = []
    waiting: list[tuple[bool, str]] = []  # opened on the current line, read after it
    reading: tuple[bool, str] | None = None
    previous = ""
    for number, line in enumerate(body.split("\n"), start=1):
        if reading is not None:
            strip_tabs, word = reading
            if (line.lstrip("\t") if strip_tabs else line) == word:
                if _continues(previous):
                    found.append((number, word))
                reading = waiting.pop(0) if waiting else None
                previous = ""
                continue
            previous = line
            continue
        if "<<" in line:
            waiting.extend((m.group(1) == "-", m.group(2)) for m in _OPENER.finditer(line))
        if waiting:
            reading = waiting.pop(0)
            previous = ""
    return found


def _continues(line: str) -> bool:
    """Tell whether a line ends in a backslash that escapes the newline (an odd run of them)."""
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1
