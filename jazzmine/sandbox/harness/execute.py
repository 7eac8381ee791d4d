"""Run one request's script in the worker: its namespace, its walls, and how it ended."""

from __future__ import annotations

import ast
import builtins
import contextlib
import os
import sys
from typing import Any, NoReturn

from .audit import install_audit_hook
from .channel import Channel, Emitters, LogWriter
from .domain import domain_enter, domain_ruleset
from .failure import ScriptFailure, error_data
from .guards import Guards, rewrite
from .isolation import parse_isolated, proxy, start_hosts
from .protocol import SCRIPT_FILENAME, UNRESTRICTED_ENV
from .scope import module_views, restricted_builtins
from .toolbox import (
    ToolBox,
    parse_allowed,
    parse_tool_parameters,
    parse_tool_secrets,
    refusal_message,
)

# Parsed, rewritten and compiled once before `ready`: the first compile in a fresh process
# costs about a third of a millisecond more than later ones, and a run should not pay it.
WARM_SCRIPT = 'def f(x):\n    return x.y[0]\n\nemit_log(f"{1}")\n'


def warm_compiler() -> None:
    """Run the parse, rewrite and compile steps once on a small script (never executed)."""
    tree, _problems = rewrite(ast.parse(WARM_SCRIPT, SCRIPT_FILENAME, "exec"))
    compile(tree, SCRIPT_FILENAME, "exec")


def script_scope(
    safety: Any, tool_types: Any, toolbox: ToolBox, emitters: Emitters, *, unrestricted: bool
) -> dict[str, Any]:
    """Return the globals a script runs in: builtins, emit helpers, module views and tools.

    Nothing in it depends on the request, so the worker builds it before `ready` and a
    dispatch only compiles and runs the script.
    """
    guards = Guards(frozenset(safety.FORBIDDEN_ATTRIBUTES), safety.format_field_problem)
    script_globals: dict[str, Any] = {
        "__name__": "__main__",
        "__builtins__": builtins if unrestricted else restricted_builtins(safety, emitters, guards),
        "ToolResponse": tool_types.ToolResponse,
        "emit_intermediate": emitters.emit_intermediate,
        "emit_log": emitters.emit_log,
        "emit_result": emitters.emit_result,
    }
    script_globals.update(module_views(safety))
    script_globals.update(toolbox.functions)
    return script_globals


def execute(
    request: dict[str, Any],
    channel: Channel,
    safety: Any,
    tool_types: Any,
    toolbox: ToolBox,
    emitters: Emitters,
    stdout: LogWriter,
    stderr: LogWriter,
    *,
    restricted_scope: dict[str, Any],
    secrets_fd: int,
) -> str:
    """Run the script of one request and return its outcome: "result" or "script_error".

    `restricted_scope` is `script_scope(..., unrestricted=False)`, made before the request;
    an allowed unrestricted run gets a scope of its own here. `secrets_fd` is the pipe the
    relay writes the tools' own secrets to, for their own processes alone (isolation.py).
    """
    script = request.get("script")
    body_offset = int(request.get("body_offset") or 0)
    if not isinstance(script, str):
        channel.send("error", error_data("BadRequest", "The run request has no script text"))
        return "script_error"
    # A missing key is as malformed as a wrong one: a run always says what it may call.
    allowed, problem = parse_allowed(request.get("allowed_tools", False))
    if problem is not None:
        channel.send("log", {"message": problem, "stream": "harness"})
    toolbox.allowed = allowed
    # The same for what each tool may be passed (the parameters its prompt documents).
    parameters, problem = parse_tool_parameters(request.get("tool_parameters", False))
    if problem is not None:
        channel.send("log", {"message": problem, "stream": "harness"})
    toolbox.parameters = parameters

    def on_refused(name: str) -> None:
        message = f"refused a call to tool {name!r}: " + refusal_message(name)
        channel.send("log", {"message": message, "stream": "harness"})

    toolbox.on_refused = on_refused

    def on_fatal(message: str) -> NoReturn:
        # A tool call left what could not be moved aside (leftovers.py): the run ends here,
        # whatever the script would catch, with the error saying why.
        for stream in (stdout, stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        channel.send("error", error_data("SandboxUnsafe", message))
        channel.done("script_error")
        os._exit(0)

    toolbox.on_fatal = on_fatal
    # Read before the run's secrets are put in the environment: a secret named like the
    # runner's switch must not turn it on.
    may_be_unrestricted = os.environ.get(UNRESTRICTED_ENV) == "1"
    shared, problem = toolbox.take_secrets(request.get("secrets"), request.get("tool_secrets"))
    if problem is not None:
        channel.send("log", {"message": problem, "stream": "harness"})
    os.environ.update(shared)
    # Before any of the script runs: the processes of the tools with secrets of their own are
    # forked from what the tools' loading made, nothing of the script's.
    isolated, isolated_problem = parse_isolated(request.get("isolated_tools"))
    if isolated_problem is not None:
        channel.send("log", {"message": isolated_problem, "stream": "harness"})
    if problem is not None or parse_tool_secrets(request.get("tool_secrets"))[0] is None:
        isolated = []  # what the request cannot say clearly: no tool gets a secret at all
    ruleset = None
    if isolated:
        # Made before any tool takes its secrets: without a domain to enter, none does.
        ruleset, refused = domain_ruleset()
        if ruleset is None:
            channel.send("log", {"message": f"no tool gets a secret of its own: {refused}",
                                 "stream": "harness"})  # fmt: skip
            isolated = []
    hosts = start_hosts(isolated, toolbox, secrets_fd, close_in_child=(channel.fileno(),))
    if ruleset is not None:
        # The tools' processes are outside it, forked already; the script and all it starts
        # are inside, and read nothing of them (domain.py). Not inside: the run ends here,
        # before its first line, for the tools hold their secrets now.
        refused = domain_enter(ruleset)
        if refused is not None:
            on_fatal(f"The script cannot be kept from the tools' own secrets: {refused}")
    proxies = {
        name: proxy(host, toolbox, {"stdout": stdout, "stderr": stderr})
        for name, host in hosts.items()
    }
    toolbox.functions.update(proxies)

    failure = ScriptFailure(script, body_offset, toolbox.files)
    unrestricted = bool(request.get("unrestricted")) and may_be_unrestricted
    script_globals = (
        script_scope(safety, tool_types, toolbox, emitters, unrestricted=True)
        if unrestricted
        else restricted_scope
    )
    script_globals.update(proxies)
    if request.get("unrestricted") and not unrestricted:
        refused = "unrestricted mode refused: this runner does not allow it"
        channel.send("log", {"message": refused, "stream": "harness"})

    try:
        tree = ast.parse(script, SCRIPT_FILENAME, "exec")
        if not unrestricted:
            tree, problems = rewrite(tree)
            if problems:
                line, text = problems[0]
                where = line - body_offset
                message = f"SandboxViolation at line {where} of the script: {text}"
                channel.send("error", error_data("SandboxViolation", message, line=where))
                return "script_error"
        code = compile(tree, SCRIPT_FILENAME, "exec")
    except SyntaxError as exc:
        channel.send("error", failure.syntax(exc))
        return "script_error"
    except (ValueError, RecursionError, MemoryError) as exc:
        message = f"The script could not be compiled: {type(exc).__name__}: {exc}"
        channel.send("error", error_data(type(exc).__name__, message))
        return "script_error"

    if not unrestricted:
        trusted = frozenset(toolbox.wrapper_codes)
        install_audit_hook(frozenset(toolbox.files), trusted, toolbox.is_tool)
    sys.stdout, sys.stderr = stdout, stderr
    try:
        exec(code, script_globals)
    except BaseException as exc:  # every failure of the script is reported, never raised
        stdout.flush()
        stderr.flush()
        channel.send("error", failure.runtime(exc))
        return "script_error"
    stdout.flush()
    stderr.flush()
    if not emitters.result_sent:
        message = "The script finished without calling emit_result(...)"
        channel.send("error", error_data("NoResult", message))
        return "script_error"
    return "result"
