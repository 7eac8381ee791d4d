"""Build a bashkit ScriptedTool for a tool set, run one bash script and trace every builtin call.

Stdlib + bashkit only, and no jazzmine imports: this file is copied into the bash sandbox image
next to the in-container runner, so host tests and container runs use the same code.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

try:
    from .blindspots import limit_blind_spot
except ImportError:  # in the bash image, where this file is bash_engine.py beside it
    from bash_blindspots import limit_blind_spot  # type: ignore[no-redef]

TOOLSET_NAME = "sandbox_tools"
# bashkit keeps this much of stdout and of stderr (ExecutionLimits' default) and cuts the rest.
OUTPUT_CAP_BYTES = 1_048_576
# What a call's event keeps of its arguments and its error, in characters: a loop passing a big
# variable to every call made each event as big, and the events the run's output. Past this
# the event says how much there was and shows the start.
MAX_CALL_TEXT_CHARS = 512
# The most one call's event takes on the sandbox's event stream, so cut.
CALL_EVENT_BYTES = 4 * MAX_CALL_TEXT_CHARS + 1024
# bashkit's line saying a limit stopped (part of) the script, and the one refusing a job
# past its limits of jobs and nesting (that job never runs).
_LIMIT_LINE = "resource limit exceeded:"
# How bashkit's own commands say they stopped at a cap of theirs (0.20.1): "awk: fatal: loop
# iteration limit (50) exceeded", "seq: line limit (100000) exceeded; output truncated",
# "sed: warning: branch/label loop limit (1000) reached", "jq: value size limit (32000000
# bytes) exceeded", "printf: format width 100000000 exceeds limit 10000".
_COMMAND_CAP = re.compile(r"\blimit \([0-9][^)]*\) (?:exceeded|reached)|\bexceeds limit [0-9]+")
_JOB_REFUSED = "fork: retry: Resource temporarily unavailable"


@dataclass(frozen=True)
class BashLimits:
    """Walls of the bash interpreter itself (the container adds its own)."""

    max_commands: int = 10_000
    max_loop_iterations: int = 10_000
    timeout_seconds: float = 30.0

    def __post_init__(self) -> None:
        for label, value in asdict(self).items():
            if value <= 0:
                raise ValueError(f"BashLimits.{label} must be positive, not {value}")


@dataclass(frozen=True)
class ToolSpec:
    """A builtin as bashkit sees it: name, description and JSON-Schema input."""

    name: str
    description: str
    schema: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict (sent to the container)."""
        return {"name": self.name, "description": self.description, "schema": self.schema}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolSpec:
        """Build a spec from `to_dict()` output."""
        return cls(name=data["name"], description=data["description"], schema=data["schema"])


@dataclass
class BashCall:
    """One builtin call: what the script passed, how it ended and how long it took."""

    seq: int
    name: str
    args: dict[str, Any]
    exit_status: int
    duration_ms: float
    started_ms: float
    stdin: bool = False
    error: str | None = None
    # True when the run was not allowed to call this tool: it never ran.
    refused: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict for the run timeline."""
        return asdict(self)


@dataclass
class BashResult:
    """The end of a bash run: its output, exit code and the trace of builtin calls."""

    stdout: str
    stderr: str
    exit_code: int
    error: str | None = None
    calls: list[BashCall] = field(default_factory=list)
    duration_ms: float = 0.0
    stdout_truncated: bool = False
    stderr_truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict."""
        data = asdict(self)
        data["calls"] = [c.to_dict() for c in self.calls]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BashResult:
        """Build a result from `to_dict()` output."""
        calls = [BashCall(**c) for c in data.get("calls", [])]
        fields = {k: v for k, v in data.items() if k != "calls"}
        return cls(**fields, calls=calls)


def refusal_message(name: str) -> str:
    """Explain a builtin the run may not call (the harness says the same for Python)."""
    return (
        f"Tool {name!r} is not allowed in this run: it needs a person's approval, and no "
        "person approved it for this script"
    )


class ToolFailed(Exception):
    """A tool reported failure; bashkit turns it into a non-zero exit status."""


def render(value: Any) -> tuple[bool, str, str | None]:
    """Turn what a tool returned into (ok, stdout text, failure message).

    A ToolResponse (anything with `success`/`message`/`data`) prints its data: strings as
    they are, everything else as one JSON line so that `| jq` works. A failed response
    prints nothing and carries its message.
    """
    if hasattr(value, "success") and hasattr(value, "data"):
        if not value.success:
            return False, "", str(getattr(value, "message", None) or "the tool failed")
        data = value.data
        if data is None:
            message = getattr(value, "message", None)
            return True, (f"{message}\n" if message else ""), None
        value = data
    if value is None:
        return True, "", None
    if isinstance(value, str):
        return True, value if value.endswith("\n") or not value else value + "\n", None
    try:
        return True, json.dumps(value, ensure_ascii=False) + "\n", None
    except (TypeError, ValueError) as exc:
        return False, "", f"the tool returned data that is not JSON: {exc}"


ToolFunction = Callable[..., Any]
CallHook = Callable[[BashCall], None]

# bashkit's prompt says "stdin pipelines are available": between commands, yes; into a tool,
# nothing is read. Said to the LLM, and to the script by a call that was piped into.
TOOLS_READ_FLAGS = (
    "A tool command reads only its --flags: pipe its output on (tool | jq), never input into it."
)
_PIPED_IN = (
    "{name} reads only its --flags, not what is piped into it: pass that text as a flag "
    '({name} --name "$(...)")'
)


class BashSession:
    """A tool set exposed as bash builtins; each `run` gets a fresh interpreter."""

    def __init__(
        self,
        specs: list[ToolSpec],
        functions: dict[str, ToolFunction],
        *,
        limits: BashLimits | None = None,
        name: str = TOOLSET_NAME,
        short_description: str | None = None,
        on_call: CallHook | None = None,
        allowed_tools: frozenset[str] | None = None,
    ) -> None:
        self.specs = list(specs)
        # Which builtins this run may call (None: all), enforced in the callback itself.
        self.allowed_tools = allowed_tools
        self.functions = dict(functions)
        self.limits = limits or BashLimits()
        self.name = name
        self.short_description = short_description
        self.on_call = on_call
        self._calls: list[BashCall] = []
        self._over_limit = False
        self._started = time.monotonic()
        # Tools bash refuses to call (a schema bashkit cannot read), each with why; set by `_build`.
        self.unreadable: dict[str, str] = {}
        self.offered: set[str] = set()  # the tools that are builtins (set by `_build`)
        self.tool = self._build()

    def _limit_message(self) -> str:
        return (
            f"the run's limit of {self.limits.max_commands} tool calls is reached "
            "(max_commands, counted across background jobs)"
        )

    def _build(self) -> Any:
        from bashkit.scripted import ScriptedTool

        tool = ScriptedTool(
            self.name,
            short_description=self.short_description,
            max_commands=self.limits.max_commands,
            max_loop_iterations=self.limits.max_loop_iterations,
            timeout_seconds=self.limits.timeout_seconds,
        )
        # bashkit lets a tool take the place of its own command of the same name: a tool named
        # `exit` or `set` would change what every script of the sandbox means (a reviewed
        # `check || exit 1` would run on past its guard). Such a tool is no builtin at all.
        shadowing = shell_commands(tuple(spec.name for spec in self.specs))
        for spec in self.specs:
            if spec.name in shadowing:
                continue  # the shell's command keeps its meaning; the prompt never offers it
            self.offered.add(spec.name)
            callback = self._callback(spec.name)
            try:
                tool.add_tool(spec.name, spec.description, callback=callback, schema=spec.schema)
            except ValueError as exc:
                # bashkit refuses some schemas (nested deeper than 64 levels), which nothing
                # checks before: one tool's schema must not fail every run of its sandbox.
                # That tool alone is refused, each time it is called.
                self.unreadable[spec.name] = f"bash cannot read its parameter schema ({exc})"
                tool.add_tool(spec.name, spec.description, callback=callback,
                              schema={"type": "object", "properties": {}})  # fmt: skip
        return tool

    def _callback(self, name: str) -> Callable[[dict[str, Any], str | None], str]:
        def callback(params: dict[str, Any], stdin: str | None = None) -> str:
            if len(self._calls) >= self.limits.max_commands:
                # bashkit counts commands per subshell: `( ... ) &` starts each background job
                # with a fresh budget. Tool calls are counted here for the whole run, and past
                # the limit none runs or is recorded; the run ends failed (see `run`).
                self._over_limit = True
                raise ToolFailed(self._limit_message())
            started = time.monotonic()
            if started - self._started >= self.limits.timeout_seconds:
                # bashkit looks at its clock between commands, not inside one of its own (a
                # long jq): tools called after the time ran out ran until it looked again,
                # side effects and all. None runs past the limit; the run ends timed out.
                raise ToolFailed(
                    f"the run's time limit of {self.limits.timeout_seconds:g} s is used up: "
                    "no tool runs past it"
                )
            function = self.functions.get(name)
            args = dict(params)
            refused = self.allowed_tools is not None and name not in self.allowed_tools
            if refused:
                ok, text, error = False, "", refusal_message(name)
            elif not args and stdin is not None and stdin.strip() and self._takes_flags(name):
                # Given no flag but text piped in (`echo '{"msg": 1}' | tool`): a tool reads
                # its --flags only, and the call went on as if given nothing. A call with
                # flags inside `... | while read x` gets the rest of the loop's input: fine.
                ok, text, error = False, "", _PIPED_IN.format(name=name)
            elif name in self.unreadable:
                why = self.unreadable[name]
                ok, text, error = False, "", f"tool {name!r} cannot be called from bash: {why}"
            elif function is None:
                ok, text, error = False, "", f"tool {name!r} is not available in this sandbox"
            else:
                try:
                    ok, text, error = render(function(**args))
                except Exception as exc:  # a plain callback that raises: report, never crash
                    ok, text, error = False, "", f"{type(exc).__name__}: {exc}"
            call = BashCall(
                seq=len(self._calls) + 1,
                name=name,
                args=_shown_args(args),
                exit_status=0 if ok else 1,
                duration_ms=round((time.monotonic() - started) * 1000, 3),
                started_ms=round((started - self._started) * 1000, 3),
                stdin=stdin is not None,
                error=error if error is None else _cut(error),
                refused=refused,
            )
            self._calls.append(call)
            if self.on_call is not None:
                self.on_call(call)
            if not ok:
                raise ToolFailed(error)
            return text

        return callback

    def _takes_flags(self, name: str) -> bool:
        """Tell whether the tool `name` has any parameter (a flag to pass its input as)."""
        spec = next((s for s in self.specs if s.name == name), None)
        return bool(spec and (spec.schema.get("properties") or {}))

    def system_prompt(self) -> str:
        """Return the system prompt bashkit writes for this tool set, and what a tool reads.

        bashkit's lists the commands by their flags' types alone: `jazzmine.bash.system_prompt`
        adds the reference of `offered` commands (`reference`).
        """
        return f"{self.tool.system_prompt()} {TOOLS_READ_FLAGS}"

    def help(self) -> str:
        """Return bashkit's Markdown help for this tool set."""
        return self.tool.help()

    def _limit_verdict(self, script: str, raw: Any) -> str | None:
        """Return why the run counts as stopped by a limit though bashkit ended it without error.

        bashkit fails the execution for most limit hits (`raw.error`), but a hit in a background
        job, a coproc or `compgen -W` only leaves a line on that part's stderr, and one in an
        EXIT trap leaves nothing. Whatever the engine cannot rule out counts as a hit.
        """
        if self._over_limit:
            return self._limit_message()
        seconds = time.monotonic() - self._started
        found = _limit_hit(raw.stderr) or _output_cut(raw.stdout_truncated, raw.stderr_truncated)
        if found:
            return found
        if seconds >= self.limits.timeout_seconds:
            return (
                f"timed out: the script used all of its time limit of "
                f"{self.limits.timeout_seconds:g} s"
                + (" (bashkit ends what runs past it in an EXIT trap without a word)"
                   if "trap" in script else "")
            )  # fmt: skip
        try:
            blind = limit_blind_spot(script)
        except Exception as exc:  # a reading that fails cannot rule anything out
            blind = f"the engine could not read the script ({type(exc).__name__}: {exc})"
        if blind is None:
            return None
        return (
            f"the engine cannot tell whether a resource limit ({self._limits_named()}) stopped "
            f"part of this script, so the run counts as stopped by one: {blind}"
        )

    def _limits_named(self) -> str:
        return (
            f"{self.limits.max_commands} commands, {self.limits.max_loop_iterations} iterations "
            f"a loop, {self.limits.timeout_seconds:g} s of time, and bashkit's caps on depth, "
            "memory and output"
        )

    def run(self, script: str) -> BashResult:
        """Run one bash script in a fresh interpreter and return its output and trace."""
        self._calls = []
        self._over_limit = False
        self._started = time.monotonic()
        raw = self.tool.execute_sync(script)
        stderr = _explain_failures(raw.stderr, self._calls)
        stderr = _flag_errors_placed(stderr, script, [spec.name for spec in self.specs])
        exit_code, error = raw.exit_code, raw.error
        hit = None if raw.error else self._limit_verdict(script, raw)
        if hit:
            # bashkit lets the script go on past a limit hit in some parts: the run fails anyway.
            exit_code, error = exit_code or 1, error or hit
        return BashResult(
            stdout=raw.stdout,
            stderr=stderr,
            exit_code=exit_code,
            error=error,
            calls=list(self._calls),
            duration_ms=round((time.monotonic() - self._started) * 1000, 3),
            stdout_truncated=bool(raw.stdout_truncated),
            stderr_truncated=bool(raw.stderr_truncated),
        )


@functools.lru_cache(maxsize=64)
def shell_commands(names: tuple[str, ...]) -> frozenset[str]:
    """Return which of `names` bashkit's own interpreter already knows (builtin or keyword).

    Asked of a bare interpreter, so the answer follows the bashkit that runs the script.
    Raises RuntimeError when it cannot answer: no tool is offered on a guess.
    """
    if not names:
        return frozenset()
    from bashkit.scripted import ScriptedTool

    probe = ScriptedTool("probe", max_commands=100 * len(names) + 100,
                         max_loop_iterations=len(names) + 1, timeout_seconds=30)  # fmt: skip
    words = " ".join(shlex.quote(name) for name in names)
    # Indexes, not names, come back: a name holds any character a spec gives it.
    script = (
        f"i=0; for n in {words}; do "
        'if [ -n "$(type -t -- "$n" 2>/dev/null)" ]; then echo "$i"; fi; i=$((i+1)); done\n'
    )
    raw = probe.execute_sync(script)
    lines = raw.stdout.split()
    if raw.exit_code != 0 or raw.error or not all(line.isdigit() for line in lines):
        raise RuntimeError(f"bashkit could not tell its own commands: {raw.error or raw.stderr}")
    return frozenset(names[int(line)] for line in lines)


def _limit_hit(stderr: str) -> str | None:
    """Return bashkit's line saying a limit stopped (part of) the script, if it wrote one.

    Its own commands have caps of their own, which end (or cut) that command alone and leave
    the script going on with what it got: awk's loop iterations, seq's lines, sed's branch
    loops, jq's value size, printf's width. Their lines count as the interpreter's do.
    """
    for line in stderr.splitlines():
        if _LIMIT_LINE in line:
            return line.strip()
        if _COMMAND_CAP.search(line):
            return (
                f"resource limit exceeded: a command stopped at a cap of its own ({line.strip()})"
            )
        if _JOB_REFUSED in line:
            return f"resource limit exceeded: bashkit refused a background job ({line.strip()})"
    return None


def _output_cut(stdout_cut: bool, stderr_cut: bool) -> str | None:
    """Say which streams bashkit cut at its cap: what the run shows of them is not all."""
    streams = [name for name, cut in (("stdout", stdout_cut), ("stderr", stderr_cut)) if cut]
    if not streams:
        return None
    return (
        f"output limit: bashkit cut the script's {' and '.join(streams)} at "
        f"{OUTPUT_CAP_BYTES} bytes, so the run shows only part of what it wrote (and a line "
        "saying a limit stopped part of it may be in what was cut)"
    )


def _explain_failures(stderr: str, calls: list[BashCall]) -> str:
    """Put each failed tool's own message where bashkit wrote its generic 'callback failed'.

    bashkit hides callback errors so host secrets cannot leak into the script; our messages
    are the ToolResponse messages written for the LLM, the same a Python script would see.
    """
    for call in calls:
        if call.error is None:
            continue
        generic = f"{call.name}: callback failed"
        if generic in stderr:
            stderr = stderr.replace(generic, f"{call.name}: {call.error}", 1)
    return stderr


# bashkit's refusal of a tool's argument that is not a --flag: it names neither the tool nor
# the line, and a script calls many tools (the LLM that reads it has to guess which). Two
# refusals in a row come without a line break between them.
_FLAG_ERROR = re.compile(r"expected --flag, got: (?P<token>.*?)(?=expected --flag, got: |\n|$)")
FLAG_HINT = "a tool takes only flags: --name value, or --name=value"


def _flag_errors_placed(stderr: str, script: str, tool_names: list[str]) -> str:
    """Name the line and the tool of each of bashkit's "expected --flag" refusals.

    The calls of the script that could have made it are the lines where a tool's name is
    followed by the refused word; each refusal takes the next such line, as bash runs them
    in order. A refusal no line explains still gets the hint.
    """
    if "expected --flag" not in stderr:
        return stderr
    lines = script.splitlines()
    # A tool's name where a command starts (not inside `echo "get_user x"`).
    named = re.compile(
        r"(?:^|[;&|({`]|\$\(|\b(?:then|do|else|time|!))\s*("
        + "|".join(map(re.escape, sorted(tool_names, key=len, reverse=True)))
        + r")(?=\s|$)"
    ) if tool_names else None  # fmt: skip
    after = 0  # the script's lines before this one explained an earlier refusal

    def placed(match: re.Match[str]) -> str:
        nonlocal after
        token = match.group("token")
        said = f"expected --flag, got: {token} ({FLAG_HINT})"
        ends = "" if match.end() == len(stderr) or stderr[match.end()] == "\n" else "\n"
        for number in range(after, len(lines)):
            found = named.search(lines[number]) if named is not None else None
            if found is not None and token and token in lines[number][found.end() :]:
                after = number + 1
                return f"line {number + 1}: {found.group(1)}: {said}{ends}"
        return said + ends

    return _FLAG_ERROR.sub(placed, stderr)


def _shown_args(args: dict[str, Any]) -> dict[str, Any]:
    """Return a call's arguments as its event keeps them: as JSON, cut past a few hundred chars."""
    try:
        text = json.dumps(args, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(args)
    else:
        if len(text) <= MAX_CALL_TEXT_CHARS:
            return json.loads(text)
    return {"(arguments)": _cut(text)}


def _cut(text: str) -> str:
    if len(text) <= MAX_CALL_TEXT_CHARS:
        return text
    return f"{text[:MAX_CALL_TEXT_CHARS]}… ({len(text):,} characters in all)"
