"""A message the script forges on the event pipe is charged to the script, never a crash.

The relay (the sandbox's first process) reads what the script's process writes and checks it.
A script past the validator can write there itself, with the pipe's token: a message whose
type is a list made the relay's check raise `TypeError` and die, and the run ended as a
`container_crash`, the sandbox's fault; an intermediate without a label went through to the
host, which refused it as the sandbox breaking the protocol. Each is now the script's
protocol error, told as such, with the run ending once, in order.

The harness runs as a plain subprocess, unrestricted (a test-only mode standing for a script
that got past the validator).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jazzmine.sandbox.harness import SHARED_MACHINE_ENV, UNRESTRICTED_ENV
from jazzmine.sandbox.runtime import stage_runtime

from .sample_tools import TEST_SANDBOX, make_registry

# Finds the pipe the harness gave the script's process and writes one raw message on it.
FORGE = """\
import gc, json, os
channel = next(o for o in gc.get_objects() if type(o).__name__ == "Channel")
os.write(channel._fd, channel._prefix + MESSAGE + b"\\n")
emit_result("after")
"""


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Path:
    registry = make_registry()
    return stage_runtime(tmp_path_factory.mktemp("runtime"), registry.tools(TEST_SANDBOX))


def forged(runtime: Path, message: bytes) -> tuple[list[dict], str]:
    request = {
        "script": f"MESSAGE = {message!r}\n" + FORGE,
        "unrestricted": True,
        "allowed_tools": None,
        "tool_parameters": None,
        "secrets": {},
        "tool_secrets": {},
    }
    done = subprocess.run(
        [sys.executable, "-I", str(runtime / "harness.py"), str(runtime)],
        input=(json.dumps(request) + "\n").encode(), capture_output=True, timeout=30,
        check=False,
        env={"PATH": os.environ["PATH"], SHARED_MACHINE_ENV: "1", UNRESTRICTED_ENV: "1"},
    )  # fmt: skip
    return [json.loads(x) for x in done.stdout.decode().splitlines()], done.stderr.decode()


NESTED = b'{"type": "log", "data": {"message": "x", "n": ' + b"[" * 900 + b"]" * 900 + b"}}"


@pytest.mark.parametrize(
    ("message", "said"),
    [
        (b'{"type": ["log"], "data": {"message": "x"}}', "unknown type ['log']"),
        (b'{"type": {"a": 1}, "data": {}}', "unknown type {'a': 1}"),
        (b'{"type": "intermediate", "data": 5}', "without a string label"),
        (b'{"type": "intermediate", "data": {"label": 7}}', "without a string label"),
        (NESTED, "protocol"),
    ],
)
def test_a_forged_message_ends_the_run_as_the_scripts_protocol_error(
    runtime: Path, message: bytes, said: str
) -> None:
    lines, stderr = forged(runtime, message)
    assert lines[0]["type"] == "ready", stderr
    assert "Traceback" not in stderr, stderr
    events = lines[1:]
    assert events[-1]["type"] == "exit", (events, stderr)
    assert events[-1]["data"] == {"outcome": "script_error"}
    errors = [e["data"] for e in events if e["type"] == "error"]
    assert [e["kind"] for e in errors] == ["protocol_error"], errors
    assert said in errors[0]["message"], errors[0]["message"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))  # numbered, once
