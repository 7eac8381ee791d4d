"""Read a script's text into a syntax tree, or give the one violation that stops it being read.

Everything here looks at the script as text, before any rule about names or syntax applies:
its type, its size, whether it is empty, NUL bytes, a coding cookie, and what the parser says.
Each of these refuses the whole script with a single violation, since nothing after it could be
checked meaningfully.
"""

from __future__ import annotations

import ast
import codecs
import re
import threading
import warnings

from . import messages

# Large enough for any script an LLM writes (a 300-line script is ~12 KB); small enough that
# parsing a hostile payload cannot stall the web process that validates as the user types.
MAX_SCRIPT_CHARS = 200_000

_WARNINGS_LOCK = threading.Lock()

_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.ASCII)


def parse_script(script: object) -> ast.Module | str:
    """Return the script's tree, or the violation that refuses the whole script."""
    if not isinstance(script, str):
        return messages.violation(1, messages.not_text(script))
    if type(script) is not str:
        script = str.__str__(script)  # an exact copy: a subclass could lie in its methods
    if len(script) > MAX_SCRIPT_CHARS:
        return messages.violation(1, messages.too_long(len(script), MAX_SCRIPT_CHARS))
    if not script.strip():
        return messages.violation(1, messages.EMPTY)
    nul = script.find("\x00")
    if nul >= 0:
        return messages.violation(script.count("\n", 0, nul) + 1, messages.NUL_BYTE)
    cookie = _cookie_violation(script)
    if cookie:
        return cookie
    try:
        # Invalid escapes like "\d" make the parser warn; under `-W error` a warning becomes a
        # SyntaxError, so without this the verdict on a benign script would depend on the
        # process's warning filters (and every validation would spam the server log).
        # catch_warnings swaps process-wide state, so validations (which run on worker
        # threads in the web app) take turns; the window is one parse long.
        with _WARNINGS_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(script)
    except SyntaxError as exc:
        line = exc.lineno if isinstance(exc.lineno, int) and exc.lineno > 0 else 1
        return messages.violation(line, messages.syntax_error(exc.msg))
    except (RecursionError, MemoryError):
        return messages.violation(1, messages.TOO_DEEP)
    except ValueError as exc:  # e.g. lone surrogates, which cannot be encoded as UTF-8
        return messages.violation(1, messages.not_unicode(exc))
    if not tree.body:
        return messages.violation(1, messages.EMPTY)
    return tree


def _cookie_violation(script: str) -> str | None:
    """Refuse a PEP 263 coding cookie other than UTF-8 in the first two lines.

    `ast.parse` ignores cookies in str input, but a harness that writes the script to a file
    and runs it would honour one, so `# coding: utf_7` would let the runtime see code the
    validator read as a comment (`+AAo-` decodes to a newline).
    """
    end = script.find("\n")
    end = script.find("\n", end + 1) if end >= 0 else -1
    head = script if end < 0 else script[:end]
    if "coding" not in head:
        return None
    for number, line in enumerate(head.split("\n"), start=1):
        match = _COOKIE.match(line)
        if match is None:
            continue
        try:
            encoding = codecs.lookup(match.group(1)).name
        except LookupError:
            encoding = match.group(1)
        if encoding != "utf-8":
            return messages.violation(number, messages.coding_cookie(match.group(1)))
    return None
