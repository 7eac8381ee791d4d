"""A secret one tool declares is in the environment while that tool runs, and at no other time.

Before, every secret any tool of a sandbox declared was in the harness's environment for the
whole run: a library that reads well-known variables by itself (AWS_*, *_API_KEY, HTTPS_PROXY)
in one tool picked up another tool's, and every process a tool spawned inherited all of them.
This is least privilege between tools written by the team, not a wall: tools share a process.

The harness runs as a plain subprocess here (as in test_harness.py); a run through the web app
and a real container is in tests/web/runs/test_a_runs_secrets_reach_only_their_tools.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jazzmine.core.tools import SandboxConfig, ToolParameter, ToolRegistry, ToolResponse
from jazzmine.sandbox import RunRequest
from jazzmine.sandbox.runtime import stage_runtime

from .helpers import DELETE, harness_events, with_request

SANDBOX = "secret-scoping"
NAMES = ["SHARED_DB_URL", "AWS_SECRET_ACCESS_KEY", "PAYMENTS_TOKEN"]


def billing_view() -> ToolResponse:
    """What the billing tool sees: in its own environment and in a process it spawns."""
    import os
    import subprocess
    import sys

    names = ["SHARED_DB_URL", "AWS_SECRET_ACCESS_KEY", "PAYMENTS_TOKEN"]
    spawned = subprocess.run(
        [sys.executable, "-c", "import os, json; print(json.dumps(dict(os.environ)))"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    import json

    child = json.loads(spawned.stdout)
    return ToolResponse(
        success=True,
        data={
            "own": {n: os.environ.get(n) for n in names},
            "child": {n: child.get(n) for n in names},
        },
    )


def storage_view(report: bool = False) -> ToolResponse:
    """What the storage tool sees; its first call leaves a thread that reads 0.2 s later."""
    import builtins
    import os
    import threading
    import time

    names = ["SHARED_DB_URL", "AWS_SECRET_ACCESS_KEY", "PAYMENTS_TOKEN"]
    if report:  # what the thread read, between this tool's calls
        thread, later = builtins._storage_thread
        thread.join(5)
        return ToolResponse(success=True, data=dict(later))
    later: dict = {}

    def reader() -> None:
        time.sleep(0.2)
        later.update({n: os.environ.get(n) for n in names})

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    builtins._storage_thread = (thread, later)  # for the next call to find
    return ToolResponse(success=True, data={n: os.environ.get(n) for n in names})


def plain_view(name: str) -> ToolResponse:
    """A tool that declares no secret."""
    import os

    return ToolResponse(success=True, data=os.environ.get(name))


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=SANDBOX, secrets=["SHARED_DB_URL"]))
    for function, secrets in (
        (billing_view, ["PAYMENTS_TOKEN", "SHARED_DB_URL"]),
        (storage_view, ["AWS_SECRET_ACCESS_KEY"]),
    ):
        registry.register_function(function, description=function.__doc__, parameters=[],
                                   dependencies=[], secrets=secrets, sandbox=SANDBOX)  # fmt: skip
    registry.register_function(plain_view, description="Read a variable.",
                               parameters=[ToolParameter("name", "str")], dependencies=[],
                               secrets=[], sandbox=SANDBOX)  # fmt: skip
    return registry


@pytest.fixture(scope="module")
def runtime(registry, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return stage_runtime(tmp_path_factory.mktemp("runtime"), registry.tools(SANDBOX))


STORE = {
    "SHARED_DB_URL": "postgres://shared",
    "AWS_SECRET_ACCESS_KEY": "aws-storage-only",
    "PAYMENTS_TOKEN": "pay-billing-only",
}


run = harness_events


def request_line(registry: ToolRegistry, script: str, **overrides) -> bytes:
    request = RunRequest.for_sandbox(
        script,
        declared_secrets=registry.aggregate_secrets(SANDBOX),
        secret_store=STORE,
        tool_secrets=registry.tool_only_secrets(SANDBOX),
    )
    return with_request(request.to_line(30.0), **overrides)


def result(events: list):
    (found,) = [e["data"] for e in events if e["type"] == "result"]
    return found


def test_the_registry_says_which_secrets_are_one_tools(registry):
    assert registry.tool_only_secrets(SANDBOX) == {
        "billing_view": ["PAYMENTS_TOKEN"],  # SHARED_DB_URL is the sandbox's: everyone's
        "storage_view": ["AWS_SECRET_ACCESS_KEY"],
    }


def test_a_tool_sees_its_own_and_the_sandboxs_secrets_and_so_does_what_it_spawns(registry, runtime):
    seen = result(run(runtime, request_line(registry, "emit_result(billing_view().data)\n")))
    expected = {"SHARED_DB_URL": "postgres://shared", "AWS_SECRET_ACCESS_KEY": None,
                "PAYMENTS_TOKEN": "pay-billing-only"}  # fmt: skip
    assert seen == {"own": expected, "child": expected}


def test_another_tools_secret_is_never_in_a_tools_environment(registry, runtime):
    script = (
        "first = storage_view().data\n"
        "billing = billing_view().data\n"  # called after storage's call: its key is gone
        "plain = [plain_view(n).data for n in ['SHARED_DB_URL', 'AWS_SECRET_ACCESS_KEY',"
        " 'PAYMENTS_TOKEN']]\n"
        "emit_result([first, billing['own'], plain])\n"
    )
    first, billing, plain = result(run(runtime, request_line(registry, script)))
    assert first == {"SHARED_DB_URL": "postgres://shared",
                     "AWS_SECRET_ACCESS_KEY": "aws-storage-only", "PAYMENTS_TOKEN": None}  # fmt: skip
    assert billing["AWS_SECRET_ACCESS_KEY"] is None and billing["PAYMENTS_TOKEN"]
    assert plain == ["postgres://shared", None, None]


def test_a_thread_a_tool_leaves_behind_no_longer_sees_its_secret(registry, runtime):
    # The thread lives in the tool's own process (isolation.py), and reads while no call is
    # under way there.
    script = "storage_view()\ntime.sleep(0.5)\nemit_result(storage_view(report=True).data)\n"
    seen = result(run(runtime, request_line(registry, script)))
    assert seen == {"SHARED_DB_URL": "postgres://shared", "AWS_SECRET_ACCESS_KEY": None,
                    "PAYMENTS_TOKEN": None}  # fmt: skip


def test_a_refused_tool_gets_no_secret(registry, runtime):
    line = request_line(registry, "emit_result(billing_view().success)\n",
                        allowed_tools=["plain_view"])  # fmt: skip
    events = run(runtime, line)
    assert result(events) is False
    assert all("pay-billing-only" not in json.dumps(e) for e in events)


@pytest.mark.parametrize(
    "tool_secrets",
    [
        pytest.param({"billing_view": "PAYMENTS_TOKEN"}, id="a string, not a list"),
        pytest.param(["PAYMENTS_TOKEN"], id="a list, not a mapping"),
        pytest.param({"billing_view": [1]}, id="a name that is not a string"),
        pytest.param("billing_view", id="a string"),
        pytest.param(None, id="null"),
    ],
)
def test_a_malformed_mapping_sets_no_secret_at_all(registry, runtime, tool_secrets):
    script = (
        "emit_result([plain_view(n).data for n in ['SHARED_DB_URL', 'AWS_SECRET_ACCESS_KEY',"
        " 'PAYMENTS_TOKEN']] + [billing_view().data['own']['PAYMENTS_TOKEN']])\n"
    )
    events = run(runtime, request_line(registry, script, tool_secrets=tool_secrets))
    assert result(events) == [None, None, None, None]
    (note,) = [e for e in events if e["type"] == "log"]
    assert "tool_secrets is malformed: no secret is set" in note["data"]["message"]


def test_malformed_secrets_set_none(registry, runtime):
    line = request_line(registry, "emit_result(plain_view('SHARED_DB_URL').data)\n",
                        secrets=["SHARED_DB_URL"])  # fmt: skip
    events = run(runtime, line)
    assert result(events) is None
    assert any("secrets are malformed" in e["data"].get("message", "") for e in events
               if e["type"] == "log")  # fmt: skip


def test_a_request_without_the_mapping_sets_no_secret_at_all(registry, runtime):
    # The host always says which secrets are one tool's; a request that does not is not
    # trusted to mean "none": nobody gets any.
    line = request_line(registry, "emit_result(plain_view('SHARED_DB_URL').data)\n")
    events = run(runtime, with_request(line, tool_secrets=DELETE))
    assert result(events) is None
    assert any("no secret is set" in e["data"].get("message", "") for e in events
               if e["type"] == "log")  # fmt: skip
