"""Statically check an LLM-written script before it may run in a sandbox.

The validator is default-deny: a script may use only the syntax, names and attributes this
package knows to be safe, and everything else is reported as a violation that says, in words an
LLM can act on, how to rewrite the offending line. It is the first of several walls (the
harness's restricted builtins and the container come after it), so it refuses whole families
of escapes rather than the handful of spellings a deny-list would catch.

Why loads are checked and not only calls. A call to a name the script bound itself
(`helper(...)`, `f = sorted; f(xs)`) is allowed because every value such a name can hold was
produced by code this validator accepted: every *load* of a name is checked (only safe
builtins, tools, helpers, pre-imported modules under their attribute lists, or names the script
binds), every attribute is checked, and `getattr`/`type`/`.format` are checked at their call
sites and may not be aliased. A script therefore never holds `eval`, `open` or a module it could
call through an innocent-looking variable. Binding analysis is flow-insensitive (a name bound
anywhere counts as bound everywhere); that is sound because a script may not bind any Python
builtin name, so a load the script did not actually bind at run time raises NameError instead
of silently falling through to a builtin. This assumes, as the harness guarantees, that scripts
run in a fresh globals dict holding only tools, helpers, modules and `ToolResponse`.

What stays out of scope: values tools hand back are trusted to be plain data, and resource
exhaustion (`"x" * 10**10`, catastrophic regexes, `time.sleep`) is the container's job.

One module a job: `source` reads the text into a tree (or refuses the whole script), `allowed`
holds what a script may name, call, bind and write, `checker` walks the tree against it, and
`messages` words every violation, and `legible` refuses text a page draws otherwise
than it runs (invisible characters, look-alike names). The package runs on the host only; the sandbox gets
`safety` (the lists shared with the harness), never this package.
"""

from __future__ import annotations

from collections.abc import Iterable

from . import messages
from .allowed import FORBIDDEN_CALLS, context, tool_names
from .checker import Checker
from .legible import look_alike_names, names_read_otherwise, unseen_characters
from .source import MAX_SCRIPT_CHARS, parse_script

__all__ = ["FORBIDDEN_CALLS", "MAX_SCRIPT_CHARS", "validate_script"]


def validate_script(script: str, allowed_tools: Iterable[str]) -> list[str]:
    """Return the violations in `script` (empty when it may run); never raise."""
    try:
        tree = parse_script(script)
        if isinstance(tree, str):
            return [tree]
        names = tool_names(allowed_tools)
        checker = Checker(context(names))
        # What a person reads must be what runs (`legible`): checked beside the rules of names.
        text = script if type(script) is str else str.__str__(script)  # as parse_script read it
        if not text.isascii():  # ASCII text is drawn as it runs, bar a few control characters
            checker.violations.extend(look_alike_names(tree, names))
            checker.violations.extend(names_read_otherwise(text, names))
        checker.violations.extend(unseen_characters(text))
        return checker.run(tree)
    except Exception as exc:  # a validator that crashes would let nothing through: report it
        return [messages.violation(1, messages.not_analysed(exc))]
