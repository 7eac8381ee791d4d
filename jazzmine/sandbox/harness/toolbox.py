"""Load a sandbox's tools and hand each out as a never-raising function the run may refuse."""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import inspect
import json
import os
import sys
import urllib.parse
from collections.abc import Callable
from typing import Any, NoReturn

from .detach import Detacher
from .leftovers import CallDirs, LeftoverError
from .reaper import end_descendants
from .refs import _getframe, _isawaitable

# Frames a call's own clean-up may need (ending what the tool started, the sweeps, the report
# of a fatal end), kept free below Python's recursion limit: a script that recursed to just
# above a call's depth made that clean-up raise RecursionError half-way, and the run went on
# with the tool's process alive, its secrets set and its directory never swept.
CALL_HEADROOM = 150


def frames_left() -> int:
    """Return how many frames the interpreter still allows below its caller."""
    depth, frame = 0, _getframe(1)
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return sys.getrecursionlimit() - depth


def refusal_message(name: str) -> str:
    """Explain a call to a tool the run may not make."""
    return (
        f"Tool {name!r} is not allowed in this run: it needs a person's approval, and no "
        "person approved it for this script. Use only the tools this run was allowed, or "
        "submit the script for review"
    )


def parse_allowed(value: Any) -> tuple[frozenset[str] | None, str | None]:
    """Read a request's `allowed_tools`: None means every tool; anything malformed, none."""
    if value is None:
        return None, None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return frozenset(value), None
    return frozenset(), "the run request's allowed_tools is malformed: no tool may be called"


def _names_by_tool(value: Any) -> dict[str, frozenset[str]] | None:
    """Read `{tool: [name, ...]}` from a request; None for anything else."""
    if isinstance(value, dict) and all(
        isinstance(tool, str) and isinstance(names, list) and all(isinstance(n, str) for n in names)
        for tool, names in value.items()
    ):
        return {tool: frozenset(names) for tool, names in value.items()}
    return None


def parse_tool_secrets(value: Any) -> tuple[dict[str, frozenset[str]] | None, str | None]:
    """Read a request's `tool_secrets`; None when it is missing or malformed."""
    by_tool = _names_by_tool(value)
    if by_tool is None:
        return None, "the run request's tool_secrets is malformed: no secret is set"
    return by_tool, None


def parse_tool_parameters(value: Any) -> tuple[dict[str, frozenset[str]] | None, str | None]:
    """Read a request's `tool_parameters`: None means unchecked; anything malformed, none.

    The names each tool documents, as the registry the run was let through with says (its
    prompt): what a script may pass. Sent per run, not baked into the image, because a
    parameter's documentation changes without the tool's code (and its image) changing.
    """
    if value is None:
        return None, None
    by_tool = _names_by_tool(value)
    if by_tool is None:
        return {}, "the run request's tool_parameters is malformed: no tool takes any argument"
    return by_tool, None


def undocumented_arguments(
    signature: inspect.Signature | None, documented: frozenset[str], args: Any, kwargs: Any
) -> list[str]:
    """Return what a call passes beyond the parameters its tool documents, each in words.

    A function may take more than its tool documents (a cache as a mutable default, an
    `api_base=` that says where its key is sent): the prompt never tells an LLM of them, and a
    script that sets them steers the tool past its own rules. Read as Python binds the call:
    positionally too. A call Python could not bind is judged by its keywords and its count
    of positional arguments, so that an undocumented keyword is named as such rather than
    left to Python's "unexpected keyword argument"; one that passes those fails as Python says.
    """
    positional = f"{len(args)} positional arguments (it documents {len(documented)})"
    keywords = [f"parameter {k!r}" for k in sorted(kwargs) if k not in documented]
    if signature is None:  # no signature to bind with: only documented keywords, nothing else
        return [positional] * bool(args) + keywords
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return keywords + [positional] * (len(args) > len(documented))
    extra: list[str] = []
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            extra.extend(f"parameter {k!r}" for k in value if k not in documented)
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            # `*args` read as the documented parameters in order (a script tool's adapter):
            # no more of them than the tool documents.
            if len(args) > len(documented):
                extra.append(positional)
        elif name not in documented:
            extra.append(f"parameter {name!r}")
    return extra


class ToolBox:
    """Load the teleported tool sources and expose each as a plain, never-raising function."""

    def __init__(self, root: str, tool_types: Any) -> None:
        self.root = root
        self.types = tool_types
        self.functions: dict[str, Any] = {}
        self.files: dict[str, str] = {}
        # Which tools this run may call (None: all) and who hears of a refusal; set per run.
        self.allowed: frozenset[str] | None = frozenset()
        # The parameters each tool documents, by tool (None: unchecked); set per run.
        self.parameters: dict[str, frozenset[str]] | None = None
        self._signatures: dict[str, inspect.Signature | None] = {}
        self.detacher = Detacher(tool_types.ToolResponse)
        self.on_refused: Callable[[str], None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # What ends the run when something a call left cannot be moved aside (it never
        # returns); set per run (the harness ends it with an error event).
        self.on_fatal: Callable[[str], NoReturn] | None = None
        # Each call's own directory, and the sweeps around it; made before any tool loads, so
        # whatever loading a tool writes is a leftover too.
        self.calls = CallDirs()
        self.wrapper_codes: set[Any] = set()
        self._wrapped: list[Any] = []  # the functions the wrappers were made for
        # The secrets only one tool (or a few) declared, by tool: set for their calls alone.
        self._scoped: dict[str, dict[str, str]] = {}
        # What each of those names holds outside every tool's call (normally unset).
        self._outside: dict[str, str | None] = {}
        # Every secret value of the run, by name: never quoted back to the script.
        self._values: dict[str, str] = {}
        manifest_path = os.path.join(root, "manifest.json")
        if not os.path.exists(manifest_path):
            return
        with open(manifest_path, encoding="utf-8") as handle:
            manifest = json.load(handle)
        for entry in manifest.get("tools", []):
            self.functions[entry["name"]] = self._load(entry)

    def _load(self, entry: dict[str, Any]) -> Any:
        name, path = entry["name"], os.path.join(self.root, entry["file"])
        self.files[path] = name
        namespace: dict[str, Any] = {
            "__name__": f"jazzmine_tool_{name}",
            "__file__": path,
            "__builtins__": builtins,
            "ToolResponse": self.types.ToolResponse,
            "ToolParameter": self.types.ToolParameter,
        }
        try:
            with open(path, encoding="utf-8") as handle:
                exec(compile(handle.read(), path, "exec"), namespace)
            function = namespace[entry["function"]]
        except BaseException as exc:  # a broken tool must not take the harness down
            return self._broken(name, f"could not be loaded: {type(exc).__name__}: {exc}")
        return self._wrap(name, function)

    def failure(self, message: str) -> Any:
        """Return a failed ToolResponse saying `message`."""
        return self.types.ToolResponse(success=False, message=message)

    def _broken(self, name: str, why: str) -> Any:
        def broken(*_args: Any, **_kwargs: Any) -> Any:
            return self.failure(f"Tool {name!r} {why}")

        broken.__name__ = name
        return broken

    def take_secrets(self, secrets: Any, tool_secrets: Any) -> tuple[dict[str, str], str | None]:
        """Keep the run's tool-only secrets for their tools' calls; return the shared ones.

        What the request cannot say clearly is kept from everyone: a malformed mapping sets
        no secret at all, rather than every secret for every tool.
        """
        if not secrets:
            return {}, None  # nothing to give, nothing to keep
        if not isinstance(secrets, dict):
            return {}, "the run request's secrets are malformed: no secret is set"
        by_tool, problem = parse_tool_secrets(tool_secrets)
        if by_tool is None:
            return {}, problem
        values = {str(name): str(value) for name, value in secrets.items()}
        self._values = values
        scoped = set().union(*by_tool.values()) if by_tool else set()
        self._outside = {n: os.environ.get(n) for n in sorted(scoped)}
        self._scoped = {
            tool: {n: values[n] for n in sorted(names) if n in values}
            for tool, names in by_tool.items()
        }
        return {n: v for n, v in values.items() if n not in scoped}, None

    def own_secrets(self, name: str, values: dict[str, str]) -> None:
        """Take tool `name`'s own secrets, handed to its own process alone (isolation.py)."""
        self._scoped[name] = dict(values)
        self._values = {**self._values, **values}
        for secret in values:
            self._outside.setdefault(secret, os.environ.get(secret))

    def redacted(self, text: str) -> str:
        """Return `text` with every secret value of the run replaced by the secret's name.

        A tool's exception goes to the script as a failed response's message, and from there
        to the run's timeline and the LLM: an HTTP library's error quotes the URL, API key and
        all (percent-encoded when it holds `/`, `+` or `=`), and the script can make a call
        fail on purpose. Longest first: one may hold another; values shorter than four
        characters would replace ordinary text.
        """
        return secrets_redacted(text, self._values)

    def fatal(self, message: str) -> NoReturn:
        """End the run now: it cannot go on safely (nothing in the script can catch this).

        Whatever goes wrong while it says so (a RecursionError, a broken pipe), the process
        ends: a fatal end that raised instead would hand the script back control.
        """
        try:
            text = f"The run was ended: {message}"
            if self.on_fatal is not None:
                self.on_fatal(text)
            with contextlib.suppress(OSError):
                os.write(2, f"harness: {text}\n".encode("utf-8", "replace"))
        finally:
            os._exit(70)

    def refused(self, name: str) -> bool:
        """Tell whether this run may not call a tool (and report it when it may not)."""
        allowed = self.allowed
        if allowed is None or name in allowed:
            return False
        if self.on_refused is not None:
            self.on_refused(name)
        return True

    def _wrap(self, name: str, function: Any) -> Any:
        try:
            self._signatures[name] = inspect.signature(function)
        except (TypeError, ValueError):
            self._signatures[name] = None

        def call(*args: Any, **kwargs: Any) -> Any:
            # Enforced here, where the code runs, whatever the host's reading of the script.
            if self.refused(name):
                return self.failure(refusal_message(name))
            if frames_left() < CALL_HEADROOM:
                return self.failure(
                    f"Tool {name!r} was not run: the script is nested too deep (Python's "
                    "recursion limit is near); call it from a shallower place"
                )
            problem = self._arguments_problem(name, args, kwargs)
            if problem is not None:
                return self.failure(problem)
            try:
                # Copies: the tool keeps no hold of the script's containers, nor the script
                # of the tool's (`detach`).
                args, kwargs = self.detacher.copied(args), self.detacher.copied(kwargs)
            except Exception as exc:  # fail closed: what cannot be copied is not passed
                why = f"{type(exc).__name__}: {exc}"
                return self.failure(
                    f"Tool {name!r} was not run: its arguments cannot be copied ({why})"
                )
            # Every call runs as the same uid as every other, so what one leaves where it can
            # write must not run in the next one's interpreters (with the next one's secrets):
            # a directory of its own per call (its cwd, TMPDIR and HOME), and whatever an
            # earlier call (or anything else since the sandbox started) left moved aside
            # first (leftovers.py).
            try:
                workdir = self.calls.enter()
            except LeftoverError as exc:
                self.fatal(str(exc))
            except OSError as exc:
                return self.failure(f"Tool {name!r} was not run: {exc}")
            except BaseException as exc:  # half-way through a sweep: nothing is sure any more
                self.fatal(f"before a call of tool {name!r}: {type(exc).__name__}: {exc}")
            try:
                earlier = _environ_set(self._call_environment(name, workdir))
            except BaseException as exc:
                self.fatal(f"before a call of tool {name!r}: {type(exc).__name__}: {exc}")
            try:
                value = function(*args, **kwargs)
                if _isawaitable(value):
                    value = self._run(value)
            except BaseException as exc:  # includes SystemExit from a tool: still a response
                raised = f"Tool {name!r} raised {type(exc).__name__}: {exc}"
                return self.failure(self.redacted(raised))
            else:
                try:
                    return self._failure_redacted(self.detacher.copied(value))
                except Exception as exc:  # the script gets no data it could not be given a copy of
                    why = self.redacted(f"{type(exc).__name__}: {exc}")
                    return self.failure(
                        f"Tool {name!r} returned data that cannot be copied ({why})"
                    )
            finally:
                # Nothing the tool started watches the next tool (reaper.py) or writes after
                # its call, its own secrets leave the environment with it, and nothing it left
                # outlives the call; what cannot be made sure of, however it fails, ends the
                # run: a step that raised would skip the ones after it.
                for step in (end_descendants, lambda: _environ_restore(earlier),
                             lambda: self.calls.leave(workdir)):  # fmt: skip
                    try:
                        step()
                    except BaseException as exc:
                        self.fatal(f"after a call of tool {name!r}: {type(exc).__name__}: {exc}")

        call.__name__ = name
        call.__doc__ = getattr(function, "__doc__", None)
        self.wrapper_codes.add(call.__code__)
        self._wrapped.append(function)
        return call

    def _failure_redacted(self, response: Any) -> Any:
        """Return a failed response with its secrets redacted from its message, as a raised
        error's are: a tool that catches its HTTP client's error and says it in a failed
        response (`message=f"unreachable: {exc}"`) quoted the URL, key and all, to the script.
        What a tool returns as data on success is its answer, and stays as it is."""
        failed = isinstance(response, self.types.ToolResponse) and not response.success
        if failed and isinstance(response.message, str):
            response.message = self.redacted(response.message)
        return response

    def _arguments_problem(self, name: str, args: Any, kwargs: Any) -> str | None:
        """Say why a call passes what its tool does not document, or None when it does not."""
        if self.parameters is None:
            return None
        documented = self.parameters.get(name, frozenset())
        extra = undocumented_arguments(self._signatures.get(name), documented, args, kwargs)
        if not extra:
            return None
        listed = ", ".join(sorted(documented)) or "none"
        return (
            f"Tool {name!r} was not run: a script may not pass it {extra[0]}. Pass only the "
            f"parameters its description lists ({listed})"
        )

    def _call_environment(self, name: str, workdir: str) -> dict[str, str | None]:
        """Return what one call of tool `name` sets: its own secrets, no other tool's, and
        its own directory as HOME and TMPDIR."""
        own = self._scoped.get(name, {})
        # A call can start while another tool's is under way: the script hands the first tool
        # a lazy `map` or generator that calls the second. Put every other tool's secret back
        # to what it is outside all calls (None: unset) for this one, or the second tool would
        # see the first one's and could hand it back to the script (or to what it spawns).
        others = {n: value for n, value in self._outside.items() if n not in own}
        return {**others, **own, "HOME": workdir, "TMPDIR": workdir}

    def is_tool(self, function: Any) -> bool:
        """Tell whether `function` is one a wrapper was made for (by identity, never by ==)."""
        return any(function is tool for tool in self._wrapped)

    def _run(self, awaitable: Any) -> Any:
        # One private loop for all async tools of the run, created lazily.
        if self._loop is None:
            self._loop = asyncio.new_event_loop()

        async def wrapper() -> Any:
            return await awaitable

        return self._loop.run_until_complete(wrapper())


def _environ_set(values: dict[str, str | None]) -> dict[str, str | None]:
    """Set (or unset, for None) variables for a tool's call; return what they were before."""
    earlier = {name: os.environ.get(name) for name in values}
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    return earlier


def _environ_restore(earlier: dict[str, str | None]) -> None:
    for name, value in earlier.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def secrets_redacted(text: str, secrets: dict[str, str]) -> str:
    """Return `text` with each secret value, in every spelling an error gives it, replaced by
    `[secret NAME]`: longest first (one may hold another), none shorter than four characters
    (it would replace ordinary text). The host redacts a script tool's trial with it too."""
    forms = sorted(
        ((form, name) for name, value in secrets.items() if value for form in _spellings(value)),
        key=lambda item: -len(item[0]),
    )
    for form, name in forms:
        if len(form) >= 4:
            text = text.replace(form, f"[secret {name}]")
    return text


def _spellings(value: str) -> set[str]:
    """Return how a secret may appear in an error's text: as it is, and as URLs and reprs
    spell it (percent-encoded in a path or a query, escaped by `repr`)."""
    return {
        value,
        urllib.parse.quote(value),
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote_plus(value),
        repr(value)[1:-1],
    }
