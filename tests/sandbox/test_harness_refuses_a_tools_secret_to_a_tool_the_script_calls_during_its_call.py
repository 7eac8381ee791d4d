"""A tool the script calls while another tool's call is under way does not see that tool's secret.

A script can run its own code inside a tool's call: it hands the tool a lazy `map` (or a
generator expression) and the tool iterates it. From there it can call a second tool, which
then ran with the first tool's own secret in its environment and could hand it back (or pass
it to whatever it spawns). The validator accepts such a script (it is plain, common Python),
so the harness must keep each tool-only secret to its own tool's calls.

The harness runs as a plain subprocess here, as in test_harness.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jazzmine.core.tools import (
    SandboxConfig,
    ToolParameter,
    ToolRegistry,
    ToolResponse,
    validate_script,
)
from jazzmine.sandbox import RunRequest
from jazzmine.sandbox.runtime import stage_runtime

from .helpers import harness_events
from .sample_tools import read_env

SANDBOX = "nested-secrets"
STORE = {"PAYMENTS_TOKEN": "pay-charge-only", "SHARED_DB_URL": "postgres://shared"}

# Charging iterates the amounts the script gives it; the script makes that iteration call
# `read_env`, a tool without secrets, while `charge_all`'s own token is set.
LEAK = """leaked = []
def amount(n):
    leaked.append(read_env('PAYMENTS_TOKEN').data)
    return n
charged = charge_all(map(amount, [1, 2])).data
emit_result({'charged': charged, 'leaked': leaked, 'after': read_env('PAYMENTS_TOKEN').data})
"""


def charge_all(amounts: list) -> ToolResponse:
    """Add up the amounts, saying whether its own token was set while it did."""
    import os

    total = sum(amount for amount in amounts)
    token = os.environ.get("PAYMENTS_TOKEN") == "pay-charge-only"
    return ToolResponse(success=True, data={"total": total, "had_its_token": token})


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=SANDBOX, secrets=["SHARED_DB_URL"]))
    registry.register_function(charge_all, description="Charge amounts.",
                               parameters=[ToolParameter("amounts", "list")], dependencies=[],
                               secrets=["PAYMENTS_TOKEN"], sandbox=SANDBOX)  # fmt: skip
    registry.register_function(read_env, description="Read a variable.",
                               parameters=[ToolParameter("name", "str")], dependencies=[],
                               secrets=[], sandbox=SANDBOX)  # fmt: skip
    return registry


@pytest.fixture(scope="module")
def runtime(registry: ToolRegistry, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return stage_runtime(tmp_path_factory.mktemp("runtime"), registry.tools(SANDBOX))


def run(registry: ToolRegistry, runtime: Path, script: str) -> list[dict]:
    """Run a script through the harness with the sandbox's secrets; return its events."""
    request = RunRequest.for_sandbox(
        script,
        declared_secrets=registry.aggregate_secrets(SANDBOX),
        secret_store=STORE,
        tool_secrets=registry.tool_only_secrets(SANDBOX),
    )
    return harness_events(runtime, request.to_line(30.0))


def test_the_validator_accepts_the_script_so_the_harness_is_the_wall(registry):
    assert validate_script(LEAK, registry.tool_names(SANDBOX)) == []


def test_a_tool_called_during_another_tools_call_does_not_see_its_secret(registry, runtime):
    events = run(registry, runtime, LEAK)
    (result,) = [e["data"] for e in events if e["type"] == "result"]
    assert result["leaked"] == [None, None]
    assert result["after"] is None
    assert all("pay-charge-only" not in json.dumps(e) for e in events)


def test_the_outer_tool_still_has_its_secret_once_the_inner_call_returns(registry, runtime):
    events = run(registry, runtime, LEAK)
    (result,) = [e["data"] for e in events if e["type"] == "result"]
    assert result["charged"] == {"total": 3, "had_its_token": True}


def test_sandbox_wide_secrets_stay_visible_to_a_nested_call(registry, runtime):
    script = LEAK.replace("'PAYMENTS_TOKEN'", "'SHARED_DB_URL'")
    events = run(registry, runtime, script)
    (result,) = [e["data"] for e in events if e["type"] == "result"]
    assert result["leaked"] == ["postgres://shared", "postgres://shared"]
