"""A secret named like the runner's unrestricted switch never makes a run unrestricted.

Only a runner made with `allow_unrestricted=True` sets JAZZMINE_HARNESS_ALLOW_UNRESTRICTED in
the sandbox, and only then may a request ask for unrestricted builtins. But the harness read
that variable from its environment after putting the run's shared secrets there: a secret of
that name holding "1" (a secret's name is whatever its owner typed) switched the wall off for
a request that asked. The switch is read before any secret is set.

The harness runs as a plain subprocess here (as in test_harness.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jazzmine.sandbox.harness import UNRESTRICTED_ENV
from jazzmine.sandbox.runtime import stage_runtime

from .helpers import harness_events
from .sample_tools import TEST_SANDBOX, make_registry


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Path:
    registry = make_registry()
    return stage_runtime(tmp_path_factory.mktemp("runtime"), registry.tools(TEST_SANDBOX))


def test_a_shared_secret_of_that_name_leaves_the_script_restricted(runtime) -> None:
    request = {
        "script": "import os\nemit_result(os.getpid() > 0)\n",
        "unrestricted": True,
        "allowed_tools": None,
        "tool_parameters": None,
        "secrets": {UNRESTRICTED_ENV: "1"},
        "tool_secrets": {},
    }
    events = harness_events(runtime, (json.dumps(request) + "\n").encode())
    assert not [e for e in events if e["type"] == "result"], events
    assert events[0]["data"]["message"].startswith("unrestricted mode refused"), events
    (error,) = [e for e in events if e["type"] == "error"]
    assert error["data"]["exception"] == "SandboxViolation", error
