"""Which tools a script calls, read from exactly the text that runs, failing closed.

The review gate asks one question: could this script call a tool that needs a person's
approval? `read_calls` answers with the calls it is certain of and, separately, every reason
it cannot be certain. A doubt names the tools it could reach (or all of them), so the policy
can ask "could a tool that is not always-allowed be reached?" and send the script to review
whenever the answer is not a clear no.

Callers pass the script as it will run: the assembled Python script (fences stripped by
`ScriptGenerator.assemble_script`; the parser NFKC-normalises identifiers as the harness's
does) or the bash text bashkit will execute. Bash is read with bashkit's own parser
(`Bash.analyze`), the same one that runs the script, plus checks for what its analysis is
documented not to see. The run itself still carries the tools it may call
(`RunRequest.allowed_tools`), so a reading that slips cannot run a reviewed-only tool.
"""

from __future__ import annotations

import ast
import re
import unicodedata
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field

from .bash.blindspots import (
    MAX_SUBSTITUTIONS,
    SUBSTITUTION_TEXT_EXTRA,
    SUBSTITUTION_TEXT_FACTOR,
    closing_paren,
)
from .core.tools.safety import FORBIDDEN_ATTRIBUTES

ANY_TOOL: frozenset[str] = frozenset({"*"})

# Bash commands that run another command named in their arguments or in a string, or change
# what a name means: a tool behind them is not a plain command the reading can see.
BASH_RUNNERS: dict[str, str] = {
    "eval": "runs a string as commands",
    "source": "runs the commands of a file",
    ".": "runs the commands of a file",
    "exec": "runs the command named in its arguments",
    "command": "runs the command named in its arguments",
    "builtin": "runs the builtin named in its arguments",
    "xargs": "runs the command named in its arguments with input as arguments",
    "env": "runs the command named in its arguments",
    "sh": "runs a string as commands",
    "bash": "runs a string as commands",
    "timeout": "runs the command named in its arguments",
    "nohup": "runs the command named in its arguments",
    "nice": "runs the command named in its arguments",
    "stdbuf": "runs the command named in its arguments",
    "watch": "runs the command named in its arguments",
    "parallel": "runs the commands named in its arguments",
    "sudo": "runs the command named in its arguments",
    "setsid": "runs the command named in its arguments",
    "chroot": "runs the command named in its arguments",
    "trap": "runs a string as commands when a signal or exit comes",
    "alias": "makes a new name for a command",
    "unalias": "changes what a name means",
    "hash": "changes which program a name runs (`hash -p path name`)",
    "shopt": "changes how names are expanded (aliases)",
    "enable": "changes which builtins exist",
    "fc": "runs commands again from the history",
    "mapfile": "can run a callback command",
    "readarray": "can run a callback command",
    "complete": "can run a completion command",
    "compgen": "can run a completion command",
    "coproc": "runs a command in the background",
}
# Commands whose program text can run commands (awk's `system()` and pipes, find's -exec).
_AWK = frozenset({"awk", "gawk", "mawk", "nawk"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
# A command word the reading accepts as certain: plain letters, digits, `_ - .`, or the test
# and no-op builtins. Anything else (globs, braces, slashes, backslashes) may expand or resolve
# to another name at run time.
_PLAIN_COMMAND = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
_PUNCTUATION_COMMANDS = frozenset({"[", "[[", ":", "!"})
_WORD_CHAR = r"[A-Za-z0-9_]"
# Where bash (and bashkit) read data again as code, outside anything `Bash.analyze` reports:
# - `${x@P}` expands `x` as a prompt: `$(...)`, backquotes and `\NNN` escapes in the value run,
#   so the tool's name need not appear in the text at all;
# - with tracing on, PS4 is expanded the same way before every command (PS0-PS3 and
#   PROMPT_COMMAND are the other prompts: named anywhere, they are a doubt too);
# - declare and its kin read a value holding `name=( ... )` again as an array assignment.
_PROMPT_EXPANSION = re.compile(r"@\s*P\s*\}")
_PROMPT_VARIABLES = re.compile(rf"(?<!{_WORD_CHAR})(?:PS[0-4]|PROMPT_COMMAND)(?!{_WORD_CHAR})")
_TRACE_SWITCHES = frozenset({"set", "shopt"})
_SHORT_FLAGS_WITH_TRACE = re.compile(r"-[A-Za-z]*x[A-Za-z]*")
_DECLARERS = frozenset({"declare", "typeset", "local", "readonly", "export"})

# Python names that reach functions by something other than their name in a call.
_PY_DYNAMIC = {
    "globals": "reads the script's names as a dict",
    "locals": "reads the script's names as a dict",
    "vars": "reads names as a dict",
    "eval": "runs a string as code",
    "exec": "runs a string as code",
    "compile": "builds code from a string",
    "getattr": "reads an attribute by name",
    "__builtins__": "reaches the builtins",
    "__import__": "imports by name",
    "__dict__": "reads names as a dict",
}


@dataclass(frozen=True)
class Doubt:
    """Why the reading cannot be sure, and which tools that could reach (`ANY_TOOL`: all)."""

    reason: str
    tools: frozenset[str] = ANY_TOOL
    line: int | None = None

    def reaches(self, name: str) -> bool:
        """Tell whether this doubt leaves open a call of the tool `name`."""
        return self.tools is ANY_TOOL or "*" in self.tools or name in self.tools

    def to_dict(self) -> dict[str, object]:
        """Return the doubt as JSON-safe data."""
        return {
            "reason": self.reason,
            "tools": sorted(self.tools),
            "line": self.line,
        }


@dataclass(frozen=True)
class Reading:
    """The tools a script certainly calls (with a line when known), and every doubt."""

    calls: dict[str, int | None] = field(default_factory=dict)
    uncertain: tuple[Doubt, ...] = ()

    @property
    def tools(self) -> list[str]:
        """Return the names the script certainly calls, sorted."""
        return sorted(self.calls)

    def may_call(self, name: str) -> bool:
        """Tell whether the script calls, or might call, the tool `name`."""
        return name in self.calls or any(d.reaches(name) for d in self.uncertain)

    def doubts_about(self, name: str) -> list[Doubt]:
        """Return the doubts that leave a call of `name` open."""
        return [d for d in self.uncertain if d.reaches(name)]

    def to_dict(self) -> dict[str, object]:
        """Return the reading as JSON-safe data: `{tools: [...], uncertain: [...]}`."""
        return {"tools": self.tools, "uncertain": [d.to_dict() for d in self.uncertain]}


def read_calls(script: str, *, language: str, tools: Iterable[str]) -> Reading:
    """Read which of `tools` the script calls; anything unresolved becomes a doubt."""
    names = frozenset(tools)
    try:
        if language == "python":
            return _read_python(script, names)
        if language == "bash":
            return _read_bash(script, names)
        return Reading(uncertain=(Doubt(f"scripts in {language!r} cannot be read"),))
    except Exception as exc:  # a reader that crashes must not read as "calls nothing"
        return Reading(uncertain=(Doubt(f"the script could not be read ({type(exc).__name__})"),))


# Python


def _read_python(script: str, names: frozenset[str]) -> Reading:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # The parser NFKC-normalises identifiers, as the harness's compile does: a fenced
            # `ｇet_orders(...)` reads as `get_orders(...)` here, exactly as it runs.
            tree = ast.parse(script)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return Reading(uncertain=(Doubt(f"the script does not parse ({type(exc).__name__})"),))
    reader = _PythonReader(names, _bound_names(tree))
    reader.visit(tree)
    return Reading(calls=reader.calls, uncertain=tuple(reader.doubts))


# `re.compile(...)` builds a pattern, not code: read as plain when `re` is the module (no
# other binding of the name in the script), rather than as "builds code from a string".
_PLAIN_MODULE_ATTRIBUTES = {("re", "compile")}


def _bound_names(tree: ast.AST) -> frozenset[str]:
    """Return every name the script binds, other than `re` by `import re` ("*": any name)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                first = alias.name.split(".")[0]
                if alias.asname is not None or first != "re":
                    bound.add(alias.asname or first)
        elif isinstance(node, ast.ImportFrom):
            # `from m import *` may bind any name.
            bound.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
    return frozenset(bound)


def _attribute_by_text(node: ast.Call) -> str | None:
    """Return the attribute `getattr(obj, "name"[, default])` reads, when it is plain text."""
    if node.keywords or len(node.args) not in (2, 3):
        return None
    if any(isinstance(arg, ast.Starred) for arg in node.args):
        return None
    name = node.args[1]
    if not isinstance(name, ast.Constant) or not isinstance(name.value, str):
        return None
    # getattr does not normalise its text as the parser does names: read what it looks up.
    return name.value if name.value.isidentifier() and name.value.isascii() else None


class _PythonReader(ast.NodeVisitor):
    """Count `tool(...)` with a literal name as a call; every other use of a tool is a doubt."""

    def __init__(self, names: frozenset[str], bound: frozenset[str] = frozenset()) -> None:
        self.names = names
        self.bound = bound  # names the script binds: they may hold anything
        self.calls: dict[str, int | None] = {}
        self.doubts: list[Doubt] = []
        self._direct: set[int] = set()  # ids of Name nodes that are the callee of a call
        self._plain: set[int] = set()  # ids of nodes read as plain although their name is not

    def _doubt(self, node: ast.AST, reason: str, tools: frozenset[str] = ANY_TOOL) -> None:
        self.doubts.append(Doubt(reason, tools, getattr(node, "lineno", None)))

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in self.names:
            self._direct.add(id(node.func))
            self.calls.setdefault(node.func.id, node.lineno)
        elif (
            isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and not self._rebound("getattr")
        ):
            # `getattr(r, "data", None)` reads `r.data`: read it as that attribute. Any other
            # text (a tool's name, a dunder, one built at run time) stays a doubt.
            attribute = _attribute_by_text(node)
            if attribute is not None and self._attribute_doubt(attribute) is None:
                self._plain.add(id(node.func))
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        if id(node) in self._plain:
            return
        if name in self.names and id(node) not in self._direct:
            if isinstance(node.ctx, ast.Load):
                reason = f"the tool {name} is used as a value (passed, stored or wrapped)"
            else:
                reason = f"the name of the tool {name} is bound to something else"
            # A tool handed around can be called under any name, but it is still this tool;
            # a name it is bound to is a doubt of its own.
            self._doubt(node, reason, frozenset({name}))
        elif name in _PY_DYNAMIC:
            self._doubt(node, f"{name} {_PY_DYNAMIC[name]}")
        elif name.startswith("__") and name.endswith("__"):
            self._doubt(node, f"{name} reaches the interpreter's internals")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        owner = node.value.id if isinstance(node.value, ast.Name) else None
        plain_module = (owner, node.attr) in _PLAIN_MODULE_ATTRIBUTES and not self._rebound(owner)
        doubt = None if plain_module else self._attribute_doubt(node.attr)
        if doubt is not None:
            self._doubt(node, *doubt)
        self.generic_visit(node)

    def _rebound(self, name: str | None) -> bool:
        """Tell whether the script may bind `name` to something of its own."""
        return name in self.bound or "*" in self.bound

    def _attribute_doubt(self, attr: str) -> tuple[str, frozenset[str]] | None:
        """Return why reading the attribute `attr` leaves a tool call open (None: it does not)."""
        if attr in _PY_DYNAMIC:
            return f".{attr} {_PY_DYNAMIC[attr]}", ANY_TOOL
        if attr in self.names:
            # `__main__.get_orders`, `sys.modules[...].get_orders`: the tool, by another road.
            return f"the tool {attr} is read as an attribute", frozenset({attr})
        if attr.startswith("_") or attr in FORBIDDEN_ATTRIBUTES:
            # `f.__globals__[...]`, `frame.f_globals`: namespaces by name, where the tool's
            # name can be built at run time. The validator refuses these too; the reading
            # does not rely on it.
            return f".{attr} reaches the interpreter's internals", ANY_TOOL
        return None

    def visit_Constant(self, node: ast.Constant) -> None:
        # Text equal to a tool's name is how getattr/globals-style tricks name a tool.
        if isinstance(node.value, str):
            text = unicodedata.normalize("NFKC", node.value).strip()
            if text in self.names:
                self._doubt(node, f"the text {text!r} names a tool", frozenset({text}))

    def _binds(self, node: ast.AST, name: str) -> None:
        if name in self.names:
            reason = f"the name of the tool {name} is bound to something else"
            self._doubt(node, reason, frozenset({name}))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._binds(node, node.name)
        self.generic_visit(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._binds(node, node.name)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._binds(node, node.name)
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        self._binds(node, node.arg)
        self.generic_visit(node)

    def visit_alias(self, node: ast.alias) -> None:
        # `import a.b` binds `a`.
        self._binds(node, node.asname or node.name.split(".")[0])

    # Bindings that hold the name as text, not as a Name node.
    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self._binds(node, node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self._binds(node, node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self._binds(node, node.name)
        self.generic_visit(node)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self._binds(node, node.rest)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        for name in node.names:
            self._binds(node, name)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        for name in node.names:
            self._binds(node, name)


# Bash


def _read_bash(script: str, names: frozenset[str]) -> Reading:
    names = names - _shell_owned(names)
    calls: dict[str, int | None] = {}
    doubts: list[Doubt] = []
    texts = [script]
    try:
        spans = _substitutions(
            script, budget=SUBSTITUTION_TEXT_FACTOR * len(script) + SUBSTITUTION_TEXT_EXTRA
        )
    except _TooMuchToRead as exc:
        doubts.append(Doubt(str(exc)))
        spans = []
    if spans is None:
        doubts.append(Doubt("a command substitution is not closed where the reading expects"))
    else:
        # bashkit's analysis does not look inside `${x:-$(...)}`, `$((...))` or subscripts:
        # read every substitution's inner text on its own as well.
        texts.extend(spans)
    for text in texts:
        _read_bash_text(text, names, calls, doubts)
    flat = script.replace("\\\n", "")  # a line continuation may split `@P` or a name
    if _PROMPT_EXPANSION.search(flat):
        doubts.append(Doubt("${x@P} expands a value as a prompt, which runs the commands in it"))
    # A tool's name anywhere else (an argument, an assignment, a string) may become a command
    # at run time through some route the reading does not follow.
    bare = _dequote(script)
    if _PROMPT_VARIABLES.search(bare):
        doubts.append(Doubt("a prompt variable (PS0-PS4, PROMPT_COMMAND) runs the commands in it"))
    for name in sorted(names - calls.keys()):
        if re.search(rf"(?<!{_WORD_CHAR}){re.escape(name)}(?!{_WORD_CHAR})", bare):
            doubts.append(
                Doubt(
                    f"{name} appears in the script other than as a plain command", frozenset({name})
                )
            )
    return Reading(calls=calls, uncertain=tuple(_unique(doubts)))


def _shell_owned(names: frozenset[str]) -> frozenset[str]:
    """Return the tools named like a command bashkit's interpreter has (`echo`, `printf`).

    Such a tool is no builtin in bash (the shell's command keeps its meaning: `bash.engine`
    never registers it), so a bash script can never call it: `echo hi` read as a call of a
    tool `echo` sent every bash script of the sandbox to a person for a call that never
    happens. When bashkit cannot tell, none is left out (each may be a call).
    """
    from .bash.engine import shell_commands

    try:
        return shell_commands(tuple(sorted(names)))
    except RuntimeError:
        return frozenset()


def _read_bash_text(
    text: str, names: frozenset[str], calls: dict[str, int | None], doubts: list[Doubt]
) -> None:
    from bashkit import Bash

    try:
        analysis = Bash().analyze(text)
    except Exception as exc:  # bashkit says: a script that does not parse means deny or ask
        doubts.append(Doubt(f"bash cannot parse part of the script ({_first_line(exc)})"))
        return
    if analysis.truncated:
        doubts.append(Doubt("the script is too long or deep for the reading to finish"))
    if analysis.has_dynamic_commands:
        doubts.append(Doubt("a command name is computed at run time (a variable or expansion)"))
    if analysis.has_interpreter_reentry:
        doubts.append(Doubt("the script runs text as commands (eval, source, sh -c)"))
    if analysis.is_opaque and not (
        analysis.has_dynamic_commands or analysis.has_interpreter_reentry
    ):
        doubts.append(Doubt("bashkit cannot see every command this script runs"))
    for function in analysis.functions:
        doubts.append(
            Doubt(f"the script defines a function {function}, which can stand in for a tool")
        )
    for command in analysis.commands:
        name = command.name
        if name is None:
            if not command.is_assignment_only:
                doubts.append(Doubt("a command name is not a literal word"))
            continue
        if name in names:
            calls.setdefault(name, None)
            continue
        if name in BASH_RUNNERS:
            doubts.append(Doubt(f"{name} {BASH_RUNNERS[name]}"))
        elif name in _TRACE_SWITCHES and _may_trace(command.args):
            doubts.append(Doubt(f"{name} may turn tracing on, which runs PS4 as a prompt"))
        elif name in _DECLARERS and any(a is None or "$" in a or "`" in a for a in command.args):
            doubts.append(
                Doubt(f"{name} may read a value again as an array assignment that runs commands")
            )
        elif name in _AWK and _awk_runs_commands(command.args):
            doubts.append(Doubt(f"the {name} program can run commands (system, pipes, getline)"))
        elif name == "find" and any(a is None or a in _FIND_EXEC for a in command.args):
            doubts.append(Doubt("find -exec runs the command named in its arguments"))
        elif not (_PLAIN_COMMAND.fullmatch(name) or name in _PUNCTUATION_COMMANDS):
            doubts.append(Doubt(f"the command word {name!r} may expand to another name"))


def _may_trace(args: list[str | None]) -> bool:
    return any(a is None or "xtrace" in a or _SHORT_FLAGS_WITH_TRACE.fullmatch(a) for a in args)


def _awk_runs_commands(args: list[str | None]) -> bool:
    return any(a is None or "system" in a or "|" in a or "getline" in a for a in args)


class _TooMuchToRead(Exception):
    """The substitutions are too many, or nested too deep, to read each on its own in time."""


def _substitutions(text: str, *, budget: int) -> list[str] | None:
    """Return the inner text of every `$(…)`, `<(…)`, `>(…)` and backquote pair; None if unclosed.

    Quotes are deliberately not honoured: reading a quoted `$(...)` as code can only add
    doubts or calls, never hide one. Each substitution is read on its own as well, so nested
    ones are read again at every level; the bounds are the bash engine's (`blindspots`). Raise `_TooMuchToRead` past `MAX_SUBSTITUTIONS` of them,
    or once their texts together pass `budget` characters (each costs a scan of its length).
    """
    found: list[str] = []
    read = 0
    i, n = 0, len(text)
    while i < n:
        if len(found) > MAX_SUBSTITUTIONS:
            raise _TooMuchToRead(
                f"the script has more than {MAX_SUBSTITUTIONS} command substitutions, too many "
                "for the reading to read each one"
            )
        if read > budget:
            raise _TooMuchToRead(
                "the script nests command substitutions too deeply for the reading to read each one"
            )
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char in "$<>" and text.startswith("(", i + 1) and not text.startswith("((", i + 1):
            end = closing_paren(text, i + 2)
            if end is None:
                return None
            found.append(text[i + 2 : end])
            read += end - i
        elif char == "`":
            end = i + 1
            while end < n and text[end] != "`":
                end += 2 if text[end] == "\\" else 1
            if end >= n:
                return None
            found.append(text[i + 1 : end].replace("\\`", "`"))
            read += end - i
            i = end
        i += 1
    return found


def _dequote(text: str) -> str:
    """Return the text with line continuations, quotes and backslashes removed."""
    return re.sub(r"['\"\\]", "", text.replace("\\\n", ""))


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


def _unique(doubts: list[Doubt]) -> list[Doubt]:
    seen: set[tuple[str, frozenset[str]]] = set()
    out: list[Doubt] = []
    for doubt in doubts:
        key = (doubt.reason, doubt.tools)
        if key not in seen:
            seen.add(key)
            out.append(doubt)
    return out
