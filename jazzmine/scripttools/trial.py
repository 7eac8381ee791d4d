"""Trial-run a script tool in the sandbox (the spec's Gate 6) and classify what happened."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import docker

from jazzmine.core.tools.registry import DEFAULT_BASE_IMAGE
from jazzmine.sandbox.containers import ContainerResult, run_one_shot
from jazzmine.sandbox.harness.toolbox import secrets_redacted
from jazzmine.sandbox.request import RunLimits

from .model import ScriptTool
from .start import script_command

# The bootstrap enforces the tool's timeout itself; the container's wall clock is a backstop
# that also covers starting and stopping the container.
START_GRACE_SECONDS = 10.0
TIMEOUT_MARK = "jazzmine-trial: timed out"
TIMEOUT_EXIT = 124
# Runs inside the container as `python3 -I -c BOOTSTRAP`: the first stdin line carries the
# script, the rest is the tool's stdin. The script is written to the tmpfs and run with the
# container's stdout and stderr, so exit code, stdout and stderr are the script's own.
BOOTSTRAP = r"""
import json, os, shutil, subprocess, sys
head, _, args = sys.stdin.buffer.read().partition(b"\n")
spec = json.loads(head)
os.makedirs("/tmp/tool", exist_ok=True)
path = "/tmp/tool/" + spec["file"]
with open(path, "w", encoding="utf-8") as handle:
    handle.write(spec["source"])
with open("/tmp/tool/stdin.json", "wb") as handle:
    handle.write(args)
exe = shutil.which(spec["runtime"])
if exe is None:
    sys.stderr.write(spec["runtime"] + ": command not found\n")
    sys.exit(127)
with open("/tmp/tool/stdin.json", "rb") as stdin:
    proc = subprocess.Popen(spec["command"], executable=exe, stdin=stdin,
                            cwd="/tmp/tool", start_new_session=True)
    try:
        code = proc.wait(timeout=spec["timeout"])
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()
        sys.stderr.write("\n%s\n" % spec["mark"])
        sys.exit(%d)
sys.exit(code if code >= 0 else 128 - code)
""".replace("%d", str(TIMEOUT_EXIT))


class TrialStatus(StrEnum):
    """The rows of the spec's result table (plus a sandbox that could not run at all)."""

    VALID_JSON = "valid_json"
    NON_JSON = "non_json"
    EMPTY = "empty"
    SCRIPT_ERROR = "script_error"
    TIMEOUT = "timeout"
    MISSING_RUNTIME = "missing_runtime"
    MISSING_MODULE = "missing_module"
    SANDBOX_ERROR = "sandbox_error"


@dataclass
class TrialResult:
    """What a trial run printed, how long it took and how the spec classifies it."""

    status: TrialStatus
    message: str
    exit_code: int | None
    stdout: str
    stderr: str
    duration_ms: float
    args: dict[str, Any] = field(default_factory=dict)
    data: Any = None
    module: str | None = None

    @property
    def passed(self) -> bool:
        """Tell whether the tool may be published: exit 0 and JSON on stdout."""
        return self.status is TrialStatus.VALID_JSON

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict for storage and the UI."""
        return {
            "status": self.status.value,
            "passed": self.passed,
            "message": self.message,
            "exit_code": self.exit_code,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "duration_ms": self.duration_ms,
            "args": self.args,
            "data": self.data,
            "module": self.module,
        }


_PY_MISSING = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '?([\w.]+)'?")
_PY_IMPORT = re.compile(r"ImportError: cannot import name '?(\w+)'?")
_NODE_MISSING = re.compile(r"Cannot find module '([^']+)'")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json_output(text: str) -> tuple[bool, Any]:
    """Parse a script's stdout as one JSON value (NaN and Infinity refused)."""
    try:
        return True, json.loads(text, parse_constant=_reject_constant)
    except ValueError:
        return False, None


def classify(
    *,
    exit_code: int | None,
    stdout: str,
    stderr: str,
    timed_out: bool = False,
    timeout_seconds: float = 0.0,
    runtime: str = "python3",
    notes: list[str] | None = None,
) -> tuple[TrialStatus, str, Any, str | None]:
    """Classify a run per the spec's table; return status, message, parsed data, module."""
    if timed_out:
        return TrialStatus.TIMEOUT, (
            f"timed out after {timeout_seconds:g} s and was killed: look for endless loops "
            "and network calls without a timeout"
        ), None, None  # fmt: skip
    text_err = stderr.strip()
    if exit_code == 127 and "command not found" in stderr:
        return TrialStatus.MISSING_RUNTIME, (
            f"{runtime}: command not found in the sandbox image; use an image that has it"
        ), None, None  # fmt: skip
    if exit_code != 0:
        match = _PY_MISSING.search(stderr) or _NODE_MISSING.search(stderr)
        if match or _PY_IMPORT.search(stderr):
            module = match.group(1) if match else None
            return TrialStatus.MISSING_MODULE, (
                f"missing module {module or '(import failed)'}: rewrite with the standard library, "
                "or declare it in the tool's dependencies (or the sandbox's), where pip finds it "
                "under the name it is published by"
            ), None, module  # fmt: skip
        detail = (
            text_err or "; ".join(notes or []) or f"exit code {exit_code} and nothing on stderr"
        )
        return TrialStatus.SCRIPT_ERROR, f"script error: {detail}", None, None
    text = stdout.strip()
    if not text:
        return TrialStatus.EMPTY, "exit 0 but nothing on stdout: print one JSON object", None, None
    ok, data = parse_json_output(text)
    if not ok:
        return TrialStatus.NON_JSON, (
            "stdout is not JSON: print exactly one json.dumps(...) and send debug output to stderr"
        ), None, None  # fmt: skip
    return TrialStatus.VALID_JSON, "exit 0 with JSON on stdout", data, None


def stdin_payload(tool: ScriptTool, args: dict[str, Any], timeout: float) -> bytes:
    """Return what the bootstrap reads: a header line with the script, then the args line."""
    header = {
        "file": tool.script_filename,
        "source": tool.source,
        "runtime": tool.runtime,
        # As a run starts it (`scripttools.start`), from where the bootstrap writes it.
        "command": script_command(tool.runtime, tool.runtime, f"/tmp/tool/{tool.script_filename}"),
        "timeout": timeout,
        "mark": TIMEOUT_MARK,
    }
    return (
        json.dumps(header, ensure_ascii=True).encode()
        + b"\n"
        + json.dumps(args, ensure_ascii=False).encode("utf-8")
        + b"\n"
    )


async def trial_run(
    tool: ScriptTool,
    args: dict[str, Any] | None = None,
    *,
    image: str = DEFAULT_BASE_IMAGE,
    limits: RunLimits | None = None,
    timeout_seconds: float | None = None,
    environment: dict[str, str] | None = None,
    client: docker.DockerClient | None = None,
) -> TrialResult:
    """Run the tool once with stdin JSON args in a hardened container and classify the result."""
    call_args = tool.sample_args() if args is None else dict(args)
    timeout = float(timeout_seconds if timeout_seconds is not None else tool.timeout)
    run_limits = limits or RunLimits()
    result: ContainerResult = await run_one_shot(
        image,
        ["python3", "-I", "-c", BOOTSTRAP],
        stdin=stdin_payload(tool, call_args, timeout),
        limits=run_limits,
        timeout_seconds=timeout + START_GRACE_SECONDS,
        environment=environment,
        labels={"jazzmine.trial": tool.name},
        client=client,
    )
    timed_out = result.timed_out
    # As a run's tool error is (the runner's own redaction): a trial's stderr, and the message
    # made of it, reach every member of the team, and an HTTP client's error quotes its URL,
    # API key and all.
    stderr = secrets_redacted(result.stderr, environment or {})
    if result.exit_code == TIMEOUT_EXIT and TIMEOUT_MARK in stderr:
        timed_out = True
        cleaned = stderr.replace(TIMEOUT_MARK, "").rstrip()
        stderr = cleaned + "\n" if cleaned else ""
    if result.error is not None:
        return TrialResult(TrialStatus.SANDBOX_ERROR, result.error, None, "", "",
                           result.duration_ms, call_args)  # fmt: skip
    status, message, data, module = classify(
        exit_code=result.exit_code,
        stdout=result.stdout,
        stderr=stderr,
        timed_out=timed_out,
        timeout_seconds=timeout,
        runtime=tool.runtime,
        notes=result.notes,
    )
    return TrialResult(
        status=status,
        message=message,
        exit_code=result.exit_code,
        stdout=result.stdout,
        stderr=stderr,
        duration_ms=result.duration_ms,
        args=call_args,
        data=data,
        module=module,
    )
