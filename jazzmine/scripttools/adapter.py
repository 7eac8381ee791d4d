"""Turn a script tool into a plain Python tool function, so one catalog serves both languages.

The generated function is what the registry teleports into the sandbox: called from a
jazzmine script (or a bash builtin), it writes the script to the sandbox's tmpfs, runs it with
the JSON arguments on stdin and returns a `ToolResponse`. It must be self-contained (the
registry keeps only the function's own lines), so everything it needs lives inside it.
"""

from __future__ import annotations

import keyword
import textwrap
from typing import Any

from jazzmine.core.tools.registry import RegisteredTool, ToolRegistry

from .model import ScriptTool
from .start import PYTHON_START

# Environment the script sees besides the secrets its tool declares: enough to run, nothing
# of the harness's own configuration.
PASSED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "JAZZMINE_KEYCHAIN_URL")
# Each script tool gets its own keychain token, scoped to the secrets it declares, under
# this prefix plus its name; the script sees it as JAZZMINE_KEYCHAIN_TOKEN and sees no other.
KEYCHAIN_TOKEN_ENV = "JAZZMINE_KEYCHAIN_TOKEN"
KEYCHAIN_TOKEN_PREFIX = "JAZZMINE_KEYCHAIN_TOKEN_"

_TEMPLATE = '''
def {name}(*args, **kwargs) -> ToolResponse:
    """Run the script tool {name} with its arguments as JSON on stdin."""
    import json as _json
    import os as _os
    import shutil as _shutil
    import subprocess as _subprocess
    import tempfile as _tempfile

    names = {names!r}
    runtime, filename, timeout = {runtime!r}, {filename!r}, {timeout!r}
    passed_env = {passed_env!r}
    token_env = {token_env!r}
    source = {source!r}

    if len(args) > len(names):
        return ToolResponse(success=False, message=(
            f"{name}() takes at most {{len(names)}} positional arguments ({{len(args)}} given)"))
    params = dict(zip(names, args))
    twice = sorted(set(params) & set(kwargs))
    if twice:
        return ToolResponse(success=False, message=f"{name}() got {{twice[0]!r}} twice")
    params.update(kwargs)
    try:
        payload = _json.dumps(params, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return ToolResponse(success=False, message=f"{name}() arguments are not JSON: {{exc}}")
    exe = _shutil.which(runtime)
    if exe is None:
        return ToolResponse(success=False, message=f"script error: {{runtime}}: command not found")
    # In the call's own directory (the harness makes one per call, its TMPDIR), never right
    # in the shared /tmp: what node, python3 and the rest look for upwards from a script
    # (package.json, node_modules, .env, pyvenv.cfg) is then this call's alone.
    workdir = _tempfile.mkdtemp(prefix="scripttool-", dir=_os.environ.get("TMPDIR") or None)
    try:
        path = _os.path.join(workdir, filename)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(source)
        env = {{k: v for k, v in _os.environ.items() if k in passed_env}}
        if token_env in _os.environ:  # this tool's own keychain token, never another's
            env[{keychain_token!r}] = _os.environ[token_env]
        handed_env = dict(env)
        env.setdefault("TMPDIR", workdir)  # its temporary files go with its work dir
        # Into files, not pipes: a child the script left running (a daemon it forked) held
        # the pipes open, and reading them to their end waited out the whole timeout. The
        # script's own end is the call's; what it left in its process group goes with it.
        with _tempfile.TemporaryFile(dir=workdir) as out, \
                _tempfile.TemporaryFile(dir=workdir) as err:
            # python3 with the sandbox's wheels importable (`scripttools.start`).
            command = [exe, "-c", {python_start!r}, path] if runtime == "python3" else [exe, path]
            process = _subprocess.Popen(
                command, stdin=_subprocess.PIPE, stdout=out, stderr=err, cwd=workdir,
                env=env, start_new_session=True,
            )
            try:
                process.communicate(payload.encode("utf-8"), timeout=timeout)
            except _subprocess.TimeoutExpired:
                return ToolResponse(success=False,
                                    message=f"script error: timed out after {{timeout:g}} s")
            finally:
                try:
                    _os.killpg(process.pid, 9)
                except OSError:
                    pass
                process.wait()
            out.seek(0)
            err.seek(0)
            done = _subprocess.CompletedProcess([exe, path], process.returncode,
                                                out.read(), err.read())
    finally:
        _shutil.rmtree(workdir, ignore_errors=True)
    stdout = done.stdout.decode("utf-8", "replace").strip()
    stderr = done.stderr.decode("utf-8", "replace").strip()
    # The error reaches the LLM, the run's timeline and the calling script (which can hand it
    # to another tool): never with the value of a secret this script was handed (an HTTP
    # library's error quotes the URL, API key and all). Longest first: one may hold another.
    handed = [(k, v) for k, v in handed_env.items() if k not in {plain_env!r} and len(v) >= 4]
    for key, value in sorted(handed, key=lambda item: -len(item[1])):
        stderr = stderr.replace(value, f"[secret {{key}}]")
    if done.returncode != 0:
        return ToolResponse(success=False, message="script error: " + (
            stderr or f"exit code {{done.returncode}} and nothing on stderr"))
    if not stdout:
        return ToolResponse(success=True, message="the script printed nothing", data=None)

    def _refuse(constant):
        raise ValueError(constant)

    try:
        data = _json.loads(stdout, parse_constant=_refuse)
    except ValueError:
        return ToolResponse(success=True, message="the script's output is not JSON", data=stdout)
    return ToolResponse(success=True, data=data)
'''


def runner_fields(tool: ScriptTool) -> dict[str, Any]:
    """Return what the generated function is made of, besides its template.

    Everything of a script tool that shapes the code a run loads is in here (and its
    dependencies, apart): what an admin's acceptance binds to (the catalog's
    `Tool.code_digest`), and what stays the same when only the template changes. Not its
    description: that is the prompt, which a team edits as it debugs how the LLM uses the
    tool. As the function's docstring it made each such edit new code, taken from the LLMs
    until a trial passed again and from its secrets until an admin accepted it again, and
    put text a member wrote into the code itself, one escape away from running.
    """
    if not tool.name.isidentifier() or keyword.iskeyword(tool.name):
        raise ValueError(f"script tool name {tool.name!r} cannot name a Python function")
    # Required parameters first: that is the order a positional call most likely means.
    required = [n for n in tool.properties if n in tool.required]
    optional = [n for n in tool.properties if n not in tool.required]
    # A secret named like the keychain's own variables would pass another tool's token on.
    own = (name for name in tool.secrets if not name.startswith("JAZZMINE_"))
    passed_env = tuple(dict.fromkeys((*PASSED_ENV, *own)))
    return {
        "name": tool.name,
        "names": [*required, *optional],
        "runtime": tool.runtime,
        "filename": tool.script_filename,
        "timeout": float(tool.timeout),
        "passed_env": passed_env,
        "token_env": KEYCHAIN_TOKEN_PREFIX + tool.name,
        "keychain_token": KEYCHAIN_TOKEN_ENV,
        "source": tool.source,
    }


def function_source(tool: ScriptTool) -> str:
    """Return the source of a Python tool function that runs the script tool in the sandbox."""
    # The variables every script gets besides its secrets: never redacted from its errors.
    plain_env = tuple(name for name in PASSED_ENV if name not in tool.secrets)
    return (
        textwrap.dedent(_TEMPLATE)
        .lstrip()
        .format(**runner_fields(tool), plain_env=plain_env, python_start=PYTHON_START)
    )


def register_script_tool(
    registry: ToolRegistry, tool: ScriptTool, *, sandbox: str = "default"
) -> RegisteredTool:
    """Register a script tool in a sandbox as a Python tool with the same name and schema."""
    return registry.register_source(
        function_source(tool),
        sandbox=sandbox,
        description=tool.description,
        parameters=tool.tool_parameters(),
        dependencies=list(tool.dependencies),
        secrets=list(tool.secrets),
        name=tool.name,
    )
