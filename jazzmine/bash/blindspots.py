"""Read a bash script for the parts where bashkit could stop it at a limit and not say so.

bashkit (0.20) fails the whole execution when a script hits one of its limits (commands, loop
iterations, function or subshell depth, memory, time), except in a few places where only that
part ends and the script goes on (read in bashkit 0.20.1's interpreter):
- a background job (`cmd &`) or a coproc: the job ends and says why in one line on its stderr;
- `compgen -W`: the error expanding the word list becomes compgen's message on its stderr;
- an EXIT trap, the script's or a subshell's: the handler ends and nothing at all is said.
bashkit takes an EXIT trap however its signal is spelled (`EXIT`, `exit`, `SIGEXIT`, `0`, `00`,
`000`...), and it expands the words of a command before it runs it: braces (`{EXIT,INT}` is
two words), a tilde (`~`, `~-`, `~+`: $HOME, $OLDPWD, $PWD, which the script sets) and globs.
bashkit's parser reports such a word as written, so the reading takes a trap's signal for
another than EXIT only when it is certainly one, and takes a word that may expand for a word
built at run time where its text is run as code or names a command.
A line on a part's stderr reaches the run only if the script lets it through: `2>/dev/null`,
`&>`, `2>&-`, `2>&1` into a variable or a pipe, `|&` on a group, a function, a loop, eval or
`wait` around it send it elsewhere (on the job's own command they do not: bashkit writes the
line outside it). Text the script builds while it runs and then runs as code (eval of a
computed string, a computed command name, a prompt expansion) may hold any of these parts. So
the run tells every limit it hit only when the script can set no EXIT trap and runs none of the
other parts where its stderr may be sent elsewhere.

The reading errs one way only: a quoted `&`, a comment or a string may pass for such a part,
never the other way round. Stdlib and bashkit only: it is copied into the bash image.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field
from typing import Any

# `&` ending a job: not `&&`, nor part of `>&`, `<&`, `&>`, `|&` or a case's `;&`.
_AMPERSAND = re.compile(r"(?<![&<>|;])&(?![&>])")
# Where stderr may go other than to the run: fd 2 redirected or closed, `&>`, `>&word`, `|&`,
# or a `{name}` descriptor (which may hold 2).
_DIVERSION = re.compile(r"(?<![0-9])0*2[<>]|&>|>&(?!\s*(?:[0-9]+|-)(?![\w/.]))|\|&|\}[<>]")
_COPROC = re.compile(r"(?<![\w-])coproc(?![\w-])")
# `${x@P}` and the prompt variables (PS4 under `set -x`) expand text as a prompt: `$(...)` in it runs.
_PROMPT = re.compile(r"@\s*P\s*\}|(?<!\w)(?:PS[0-4]|PROMPT_COMMAND)(?!\w)")
_PROBE = "__jazzmine_job_probe__"
_MAX_DEPTH = 8  # strings run as code, inside strings run as code...
# Each substitution is read (scanned and parsed) on its own too, so nested ones are read again
# at every level: n nested in a text of length L cost n scans and analyses of up to L each
# (a 16 KB script took a minute of the checking process's CPU). Past these bounds, far above
# what a script does, the reading stops, and the script is refused as unreadable. The review's
# reading (`jazzmine.gate`) keeps to the same bounds.
MAX_SUBSTITUTIONS = 1000
SUBSTITUTION_TEXT_FACTOR = 4  # all of them together: this many times the text, and a bit
SUBSTITUTION_TEXT_EXTRA = 10_000
_TOO_MANY = "command substitutions too many or nested too deep for the engine to read each one"
_MAX_AMPERSANDS = 64  # past this many, every `&` is taken for a job unread

# Commands that run another one named in their arguments, and the options that take a value.
_RUNNERS: dict[str, frozenset[str]] = {
    "command": frozenset(), "builtin": frozenset(), "exec": frozenset(), "nohup": frozenset(),
    "time": frozenset(), "setsid": frozenset(), "sudo": frozenset(), "chroot": frozenset(),
    "parallel": frozenset(), "retry": frozenset(),
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "watch": frozenset({"-n", "--interval", "-d"}),
    "xargs": frozenset({"-I", "-d", "-E", "-L", "-n", "-P", "-s", "-a", "--delimiter",
                        "--max-args", "--max-procs", "--max-chars", "--arg-file", "--eof",
                        "--max-lines"}),
}  # fmt: skip
# What ends the command before a redirection's own (a brace only as a word of its own: `{}`
# is xargs's), and the words that may open one.
_COMMAND_START = frozenset(";|&\n()`")
_LEADING = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!"})
_KEYWORDS = frozenset({"fi", "done", "esac", "case", "for", "select", "in", "function", "time",
                       "coproc", "{", "}", "[[", "]]"})  # fmt: skip
# Commands that hand on the output of jobs they wait for, lines saying why one ended included.
_JOB_WAITERS = frozenset({"wait", "fg", "bg", "jobs"})
# Commands that run text the reading cannot see (a file, another shell, the history).
_UNREAD = frozenset({"source", ".", "sh", "bash", "fc"})
_DECLARERS = frozenset({"declare", "typeset", "local", "readonly", "export"})
# bashkit's commands with caps of their own (0.20.1): one that reaches its cap ends, or cuts its
# output, saying so on its own stderr only, and the script goes on with what it got. Sent
# elsewhere from any command around it, or from its own (`jq ... 2>/dev/null`), that line never
# reaches the run.
_CAPPED = frozenset({"awk", "gawk", "mawk", "nawk", "seq", "sed", "jq", "printf"})
# Names that are such a part (or may run one) when a runner runs them.
_PARTS = frozenset({"eval", "trap", "compgen", "complete", "alias", "mapfile", "readarray"})
_RUN_BY_NAME = _PARTS | _UNREAD | _DECLARERS | frozenset(_RUNNERS)
# The names a script that bash cannot parse is searched for, word by word.
_UNPARSED = frozenset({"trap", "eval", "alias", "compgen", "complete"})
# The signals bashkit's trap knows besides EXIT (`trap -l`, and the shell's own events), as it
# reads them: in any case, with or without SIG. A word counts as one of these or as a number
# other than 0 only when it is spelled so: anything else may be EXIT (bashkit takes `00` for 0).
_OTHER_SIGNALS = frozenset({
    "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2",
    "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG",
    "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS", "ERR", "DEBUG", "RETURN",
})  # fmt: skip
# A number 1 to 64 however written (leading zeros, a plus, blanks around it): never signal 0.
_OTHER_SIGNAL_NUMBER = re.compile(r"[ \t\n]*\+?0*([1-9][0-9]?)[ \t\n]*")
# Expansions bashkit makes of a word its parser reports as written (quotes removed, so a quoted
# one looks the same and is taken for one too). Braces: a `{` (not `${`) with a comma or `..`
# before a `}` makes several words of one. A tilde: at the start, or after `=` or `:` (an
# assignment's value), it becomes a variable's value.
_BRACES = re.compile(r"(?<!\$)\{[^}]*?(?:,|\.\.)[^}]*\}")
_TILDE = re.compile(r"(?:^|[=:])~")
# In a command name, a glob or an extglob too: the name would be a file's, whatever it is.
_GLOB = re.compile(r"[*?\[]|[@+!]\(")


@dataclass
class _Reading:
    silent: list[str] = field(default_factory=list)  # a limit hit there leaves no trace
    quiet: list[str] = field(default_factory=list)  # ... only a line on that part's stderr
    capped: list[str] = field(default_factory=list)  # ... on its own stderr, own command's too
    # Each place stderr may be sent elsewhere: the text and where the redirection starts.
    diversions: list[tuple[str, int]] = field(default_factory=list)
    functions: set[str] = field(default_factory=set)
    aliases: bool = False  # an alias may make a group of any name

    def diverted(self, holding: frozenset[str] = frozenset()) -> str | None:
        """Return the first redirection that may hold a part's line, quoted, or None.

        `holding`: commands whose own stderr holds such a line (a redirection on one of them
        hides it too, not only one around it).
        """
        for text, at in self.diversions:
            if self.aliases or not _on_one_plain_command(text, at, self.functions, holding):
                return _quoted_line(text, at)
        return None


# bashkit 0.20.1 expands a brace range of at most this many words: a larger one stays the
# literal `{1..20000}` (a tool was called with it). A product of lists and ranges is cut
# short at a budget of its own (26^4 words came out 27,694; 200 x 200 came out whole), both
# without a word on stderr. Past these, the reading cannot rule a cut out.
BRACE_RANGE_WORDS = 10_000
BRACE_PRODUCT_WORDS = 40_000
_BRACE_RANGE = re.compile(r"\{(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?\}")
_BRACE_LIST = re.compile(r"\{([^{}\s]*,[^{}\s]*)\}")
_WORD_BREAK = re.compile(r"[\s;|&()<>]+")


def _brace_cut(text: str) -> str | None:
    """Say where a word of `text` expands through its braces past what bashkit expands."""
    for word in _WORD_BREAK.split(text):
        if "{" not in word:
            continue
        product = 1
        for found in _BRACE_RANGE.finditer(word):
            start, end, step = found.groups()
            if start.isalpha() != end.isalpha():
                continue  # not a range bash reads: the braces stay as they are
            low, high = (ord(start), ord(end)) if start.isalpha() else (int(start), int(end))
            words = abs(high - low) // max(1, abs(int(step or 1))) + 1
            if words > BRACE_RANGE_WORDS:
                return (
                    f"the brace range {found.group(0)} makes {words:,} words, and bashkit "
                    f"leaves one of more than {BRACE_RANGE_WORDS:,} unexpanded, without a word"
                )
            product *= words
        for found in _BRACE_LIST.finditer(word):
            product *= found.group(1).count(",") + 1
        if product > BRACE_PRODUCT_WORDS:
            return (
                f"a brace expansion makes {product:,} words, and bashkit cuts one of more "
                f"than {BRACE_PRODUCT_WORDS:,} short, without a word"
            )
    return None


def limit_blind_spot(script: str) -> str | None:
    """Return why a limit hit in this script could go unreported, or None when none could."""
    reading = _Reading()
    _read(script, reading, depth=0)
    if reading.silent:
        return reading.silent[0]
    diverted = reading.diverted() if reading.quiet else None
    if diverted:
        return f"{reading.quiet[0]}, and the script may send that stderr elsewhere ({diverted})"
    diverted = reading.diverted(_CAPPED) if reading.capped else None
    if diverted:
        return f"{reading.capped[0]}, and the script may send that stderr elsewhere ({diverted})"
    return None


def _read(text: str, reading: _Reading, depth: int) -> None:
    if depth > _MAX_DEPTH:
        reading.silent.append("strings run as code nest deeper than the engine reads")
        return
    flat = text.replace("\\\n", "")  # bash joins continued lines before anything else
    bare = _dequote(flat)
    reading.diversions += [(flat, found.start()) for found in _DIVERSION.finditer(flat)]
    if _COPROC.search(bare):
        reading.quiet.append("a coproc reports a limit hit only on its stderr")
    if _PROMPT.search(flat) or _PROMPT.search(bare):
        reading.silent.append("a prompt expansion (${x@P}, PS4) runs text built at run time")
    cut = _brace_cut(bare)
    if cut:
        reading.silent.append(cut)
    parts = _substitutions(flat)
    if parts is None:
        reading.silent.append(_TOO_MANY)
        return
    for part in [flat, *parts]:
        analysis = _analyze(part)
        if analysis is None:
            _read_unparsed(part, reading, whole=part is flat)
            continue
        if _has_job(part):
            reading.quiet.append("a background job (`&`) reports a limit hit only on its stderr")
        if analysis.has_dynamic_commands or analysis.truncated:
            reading.silent.append("a command name is computed at run time (it may be eval)")
        reading.functions.update(analysis.functions)
        for command in analysis.commands:
            if command.name is not None and _name_expands(command.name):
                reading.silent.append(
                    "a command name is expanded at run time (braces, a tilde, a glob), and may "
                    f"be eval or trap (`{command.name}`)"
                )
            elif command.name is not None:
                _read_command(command.name, list(command.args), flat, reading, depth)


def _read_command(
    name: str, args: list[str | None], text: str, reading: _Reading, depth: int
) -> None:
    literal = [a for a in args if a is not None]
    computed = len(literal) < len(args)
    # A word bashkit expands (braces, a tilde) is built at run time too: what runs as code is
    # not the text read here.
    expanded = computed or any(_expands(a) for a in literal)
    if name == "eval":
        if expanded:
            reading.silent.append("eval runs a string built at run time (or expanded: braces, ~)")
        else:
            _read(" ".join(literal), reading, depth + 1)
    elif name == "trap":
        _read_trap(args, reading, depth)
    elif name in ("compgen", "complete"):
        reading.quiet.append(f"`{name} -W` reports a limit hit in its words only on its stderr")
        if expanded:
            reading.silent.append(f"{name} expands words built at run time")
        _read(" ".join(literal), reading, depth + 1)
    elif name == "alias":
        reading.aliases = True
        if computed:
            reading.silent.append("alias makes a command of text built at run time")
        for arg in literal:
            _read(arg.partition("=")[2], reading, depth + 1)
            if "=" in arg and not _plain_alias(arg.partition("=")[2]):
                reading.silent.append(
                    "an alias the engine cannot read where it is used: it names eval, trap or "
                    "a command running them, or it is more than plain words"
                )
    elif name in _DECLARERS:
        if any(a.startswith("-") and ("a" in a or "A" in a) for a in literal):
            for arg in literal:
                _read(arg.partition("=")[2], reading, depth + 1)
            if expanded and _rereads_a_value(text):
                reading.silent.append(f"{name} -a reads a value built at run time as code")
    elif name in ("mapfile", "readarray"):
        if computed or any(a.startswith("-") and "C" in a for a in literal):
            reading.silent.append(f"{name} -C runs a callback")
    elif name in _UNREAD:
        reading.silent.append(f"`{name}` runs commands the engine cannot read")
    elif name in _RUNNERS:
        word = _command_word(name, args)
        if word is None or word in _RUN_BY_NAME:
            reading.silent.append(f"`{name}` runs a command that may be eval or trap")
        elif word in _CAPPED:
            _read_command(word, [], text, reading, depth)
    elif name in _CAPPED:
        reading.capped.append(
            f"`{name}` reports a cap of its own (loop iterations, lines, value size, width) "
            "only on its stderr"
        )


def _read_trap(args: list[str | None], reading: _Reading, depth: int) -> None:
    """Read a trap, taking it for an EXIT trap unless it certainly is not one.

    bashkit expands the words first: braces may make the handler and a signal of one word, so
    a trap with braces in any word is an EXIT trap here; a tilde makes the handler a
    variable's value. A glob stays as written, for no file can be made for it to match (no
    redirection to a file, no command writing one); under nullglob it vanishes, and the words
    after it move up, among signals that must then all be other ones too.
    """
    if None in args:
        reading.silent.append("a trap set from a value built at run time may be an EXIT trap")
        return
    words = [str(a) for a in args]
    if any(_BRACES.search(word) for word in words):
        reading.silent.append(
            "a trap whose words are expanded (braces) may be an EXIT trap: bashkit drops a "
            "limit hit inside one without a word"
        )
        return
    if words[:1] == ["--"]:
        words = words[1:]
    elif words and re.fullmatch(r"-[A-Za-z]+", words[0]):
        return  # `trap -p`, `trap -l` print, and bashkit refuses any other option: nothing is set
    if len(words) < 2:
        return  # `trap SIGNAL` resets it
    handler, signals = words[0], words[1:]
    if handler in ("", "-"):
        return  # ignores or resets the signals: no handler runs
    doubtful = [word for word in signals if not _other_signal(word)]
    if doubtful:
        named = "an EXIT trap" if _is_exit(doubtful[0]) else "a trap that may be an EXIT trap"
        reading.silent.append(f"{named}: bashkit drops a limit hit inside one without a word")
    elif _TILDE.search(handler):
        reading.silent.append("a trap whose handler is a tilde's value runs text built at run time")
    else:
        _read(handler, reading, depth + 1)  # runs as code when its signal comes


def _other_signal(word: str) -> bool:
    """Tell whether a signal word is certainly a signal other than EXIT, as bashkit reads it."""
    if not word.isascii():
        return False  # what another alphabet's letters are in upper case is not sure
    number = _OTHER_SIGNAL_NUMBER.fullmatch(word)
    if number:
        return int(number.group(1)) <= 64
    return word.upper().removeprefix("SIG") in _OTHER_SIGNALS


def _is_exit(word: str) -> bool:
    """Tell whether a signal word is EXIT as written (the rest only may be)."""
    return word.upper().removeprefix("SIG") == "EXIT" or re.fullmatch(r"0+", word) is not None


def _read_unparsed(text: str, reading: _Reading, *, whole: bool) -> None:
    """Read what bash cannot parse the coarse way: bashkit runs the lines before the error.

    In a whole text (not a substitution found by its parentheses alone, often in a string),
    a word built or expanded at run time (`$`, a backquote, a tilde, braces) may name trap or
    eval as well as these names do: `$'\\x74rap'` is trap.
    """
    if _AMPERSAND.search(text):
        reading.quiet.append("a background job (`&`) reports a limit hit only on its stderr")
    for name in sorted(_UNPARSED & set(re.findall(r"[\w-]+", _dequote(text)))):
        reading.silent.append(f"bash cannot parse all of the script, and it names {name}")
    if whole and re.search(r"[$`]|(?<![^\s;&|(=:])~|(?<!\$)\{[^}]*?(?:,|\.\.)", text):
        reading.silent.append(
            "bash cannot parse all of the script, and it builds words at run time (they may "
            "name trap or eval)"
        )


def _on_one_plain_command(
    text: str, at: int, functions: set[str], holding: frozenset[str] = frozenset()
) -> bool:
    """Tell whether the redirection at `at` belongs to one plain command that holds no part.

    Such a redirection covers that command's own stderr, never a job's line: bashkit writes
    it on the stderr around the job. Anything else (a group, a loop, a function, eval, `wait`,
    or a command whose words hold `$(...)`) may hold one, and so may a text too odd to tell.
    """
    if text[at] == "}":
        return False  # `{fd}>&-`: a descriptor held in a variable, which may be 2, for good
    if holding:
        # Where the command starts, quotes read: an awk program's `;` is no end of a command.
        ends = _command_ends(text)
        start = ends[bisect.bisect_left(ends, at) - 1] + 1 if ends and ends[0] < at else 0
    else:
        start = at
        while start > 0 and not _ends_a_command(text, start - 1):
            start -= 1
    command = text[start:at]
    if re.search(r"\$\(|`|[<>]\(", command):
        return False
    words = command.split()
    while words and (words[0] in _LEADING or re.fullmatch(r"[A-Za-z_]\w*=\S*", words[0])):
        words.pop(0)
    if not words or not re.fullmatch(r"[A-Za-z_][\w.-]*", words[0]):
        return False
    if words[0] in _RUNNERS:
        runs = _command_word(words[0], list(words[1:])) or ""
        words = [runs] if re.fullmatch(r"[A-Za-z_][\w.-]*", runs) else []
    if not words:
        return False
    name = words[0]
    if name == "eval" and holding and not _names_any(command, holding):
        return True  # it runs only the text read here, and none of those commands is in it
    return not (name in _KEYWORDS or name in _RUN_BY_NAME or name in _JOB_WAITERS
                or name in functions or name in holding)  # fmt: skip


def _names_any(text: str, names: frozenset[str]) -> bool:
    """Tell whether any of `names` stands in the text as a word (quoted or not)."""
    return any(re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", text) for name in names)


@functools.lru_cache(maxsize=8)
def _command_ends(text: str) -> list[int]:
    """Return where commands end in a text, outside quotes: sorted positions of the ends."""
    ends: list[int] = []
    quote = ""
    escaped = False
    for i, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif _ends_a_command(text, i):
            ends.append(i)
    return ends


def _ends_a_command(text: str, i: int) -> bool:
    char = text[i]
    if char == "}":
        return i == 0 or text[i - 1] in " \t\n;&|"
    if char == "{":
        return i + 1 == len(text) or text[i + 1] in " \t\n"
    return char in _COMMAND_START


def _has_job(text: str) -> bool:
    """Tell whether an `&` of the text ends a job, asking bash's parser of each one."""
    spots = [found.start() for found in _AMPERSAND.finditer(text)]
    if len(spots) > _MAX_AMPERSANDS:
        return True
    for at in spots:
        # A job's `&` lets a command follow; in a string or a comment, the probe stays text.
        probed = _analyze(f"{text[: at + 1]} {_PROBE};{text[at + 1 :]}")
        if probed is None or any(c.name == _PROBE for c in probed.commands):
            return True
    return False


def _command_word(name: str, args: list[str | None]) -> str | None:
    """Return the command a runner runs: None when it is computed, "" when it runs none.

    xargs's command is computed too when it is the string `-I` replaces with its input.
    """
    words = iter(args)
    duration_left = name == "timeout"
    replaced = {"{}"}
    for arg in words:
        if arg is None or _expands(arg):
            return None  # built at run time, or braces that may make it several words
        if arg == "--":
            arg = next(words, "")
            return None if arg is None or arg in replaced or _name_expands(arg) else arg
        if arg in _RUNNERS[name]:
            value = next(words, None)
            if arg == "-I":
                replaced.add(value or "")
        elif arg.startswith("-") or (name == "env" and "=" in arg):
            if name == "xargs" and arg.startswith("-I"):
                replaced.add(arg[2:])
        elif duration_left:
            duration_left = False
        else:
            return None if (name == "xargs" and arg in replaced) or _name_expands(arg) else arg
    return ""


def _rereads_a_value(text: str) -> bool:
    """Tell whether some declare-like command holds a value that is no literal `name=( ... )`.

    `declare -a a="$x"` reads `x` again as `( ... )`, running what it holds; the literal
    `declare -a a=($(tool))` only splits the tool's output.
    """
    commands = re.finditer(r"(?<![\w-])(?:declare|typeset|local|readonly|export)\s[^\n;&|]*", text)
    for command in commands:
        if not re.search(r"\s-\w*[aA]", command.group()):
            continue  # no array flag: a value is only ever a string
        # A tilde too: `declare -a a=~` reads what $HOME holds as `( ... )`, running it.
        if re.search(r"[$`\"'~]", _without_literal_arrays(command.group())):
            return True
    return False


def _expands(word: str) -> bool:
    """Tell whether bashkit may expand a word its parser reported as written into other text.

    Braces may make several words of it, a tilde a variable's value. A glob is left out: no
    file can be made for one to match, so it stays as written (or vanishes, under nullglob).
    """
    return _BRACES.search(word) is not None or _TILDE.search(word) is not None


def _name_expands(name: str) -> bool:
    """Tell whether a command name may be another once expanded (`[` is the test command)."""
    return _expands(name) or (name not in ("[", "[[") and _GLOB.search(name) is not None)


def _plain_alias(value: str) -> bool:
    """Tell whether an alias's value is plain words running no part, read as code as they are.

    Where an alias is used, bashkit reads its value and the words after it as one command:
    a value naming eval or trap (or a runner of them) runs words the reading never sees
    beside it; quotes, expansions or operators may join them into anything; a value ending in
    a blank makes the next word an alias too, and an empty one makes it the command.
    """
    words = value.split(" ")
    return bool(value) and all(
        re.fullmatch(r"[A-Za-z0-9_./=:%,+@-]+", word)
        and word not in _RUN_BY_NAME
        and word not in _KEYWORDS  # `alias w=while` changes how what follows it parses
        and word not in _LEADING
        for word in words
    )


def _without_literal_arrays(text: str) -> str:
    out, i = [], 0
    for found in re.finditer(r"(?<![\w\"'$])[A-Za-z_]\w*(?:\[[^\]]*\])?\+?=\(", text):
        if found.start() < i:
            continue
        end = closing_paren(text, found.end())
        out.append(text[i : found.start()])
        i = len(text) if end is None else end + 1
    return "".join(out) + text[i:]


def _substitutions(text: str) -> list[str] | None:
    """Return the inner text of every `$(…)`, `<(…)`, `>(…)` and backquote pair.

    Quotes are not honoured on purpose: the parser's analysis does not look inside `${x:-…}`,
    `$((…))` or subscripts, and reading a quoted one as code can only find more. None when
    there are more than `MAX_SUBSTITUTIONS`, or their texts together pass the budget.
    """
    found: list[str] = []
    budget = SUBSTITUTION_TEXT_FACTOR * len(text) + SUBSTITUTION_TEXT_EXTRA
    read = 0
    i, n = 0, len(text)
    while i < n:
        if len(found) > MAX_SUBSTITUTIONS or read > budget:
            return None
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char in "$<>" and text.startswith("(", i + 1) and not text.startswith("((", i + 1):
            end = closing_paren(text, i + 2)
            if end is not None:
                found.append(text[i + 2 : end])
                read += end - i
        elif char == "`":
            end = text.find("`", i + 1)
            if end > i:
                found.append(text[i + 1 : end])
                read += end - i
                i = end
        i += 1
    return found


def closing_paren(text: str, start: int) -> int | None:
    """Return where the `(` opened before `start` closes (quotes skipped), or None if never."""
    depth, i, n = 1, start, len(text)
    while i < n:
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char in "'\"":
            close = text.find(char, i + 1)
            if close < 0:
                return None
            i = close + 1
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _analyze(text: str) -> Any:
    from bashkit import Bash  # bashkit's own parser, the one that runs the script; runs nothing

    try:
        return Bash().analyze(text)
    except Exception:  # BashError, or a parser limit: this text does not parse on its own
        return None


def _dequote(text: str) -> str:
    """Return the text without quotes and backslashes: `t''rap` is the word trap."""
    return re.sub(r"['\"\\]", "", text)


def _quoted_line(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    line = text[start : end if end >= 0 else len(text)].strip()
    return f"`{line[:60]}…`" if len(line) > 60 else f"`{line}`"
