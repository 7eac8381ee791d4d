"""Each tool call works in a fresh directory of its own: its cwd, TMPDIR and HOME.

The worker's cwd was the sandbox's shared /tmp, so every process a tool started had the one
directory every call can write as its cwd (first on the path of `python3 -c`, where node and
python look upwards for package.json, .env, pyvenv.cfg) and as its temp dir. Now a call gets
a directory made for it, right below /tmp, and a script tool's work dir is made in it; the
call's processes never see another call's.

A call can start while another is under way (the script hands a tool a lazy `map` that calls
a second tool): the first call keeps its directory, and what it wrote there, through the
second one, and goes on in it; only what the second call left goes with the second call.
"""

from __future__ import annotations

import pytest

from jazzmine.core.tools import ToolParameter, ToolRegistry, ToolResponse
from jazzmine.sandbox import Outcome, RunLimits, RunRequest, SandboxBuilder
from jazzmine.scripttools import register_script_tool
from jazzmine.scripttools.model import ScriptTool

from .helpers import collect, final, of_type

pytestmark = pytest.mark.docker

# A script tool: where it runs, and what it was handed as its temp dir and HOME.
WHERE_JS = r"""
const os = require("os");
console.log(JSON.stringify({cwd: process.cwd(), tmpdir: os.tmpdir(), home: process.env.HOME}));
"""


def where() -> ToolResponse:
    """Where this call runs, and what it leaves behind (a file in /tmp, one in its cwd)."""
    import os
    import subprocess
    import sys

    cwd = os.getcwd()
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getcwd())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    listed = sorted(os.listdir(cwd))
    with open("/tmp/inner-left", "w") as handle:
        handle.write("left")
    with open("own-file", "w") as handle:
        handle.write("own")
    return ToolResponse(
        success=True,
        data={
            "cwd": cwd,
            "tmpdir": os.environ.get("TMPDIR"),
            "home": os.environ.get("HOME"),
            "child": child.stdout.strip(),
            "empty": listed == [],
        },
    )


def keep_through(values: list) -> ToolResponse:
    """Write a file in its own directory, iterate `values`, then read it back from there."""
    import os

    before = os.getcwd()
    with open("note", "w") as handle:
        handle.write("mine")
    seen = list(values)
    with open(os.path.join(before, "note")) as handle:
        note = handle.read()
    return ToolResponse(
        success=True,
        data={"before": before, "after": os.getcwd(), "note": note, "seen": seen,
              "inner_left": os.path.exists("/tmp/inner-left")},
    )  # fmt: skip


@pytest.fixture(scope="module")
def image(docker_client, base_image, tmp_path_factory) -> str:
    registry = ToolRegistry()
    register_script_tool(
        registry,
        ScriptTool.from_json_dict(
            {
                "name": "where_js",
                "description": "Where a node script tool runs.",
                "parameters": {"type": "object", "properties": {}},
            },
            source=WHERE_JS,
            runtime="node",
        ),
    )
    registry.register_function(where, description="Where a call runs.", parameters=[],
                               dependencies=[], secrets=[], sandbox="default")  # fmt: skip
    registry.register_function(keep_through, description="Keep a file through an iteration.",
                               parameters=[ToolParameter("values", "list")], dependencies=[],
                               secrets=[], sandbox="default")  # fmt: skip
    builder = SandboxBuilder(
        registry, client=docker_client, cache_dir=tmp_path_factory.mktemp("cache")
    )
    return builder.ensure_image("default").tag


async def _result(runner, image: str, script: str):
    events = await collect(
        runner.bind(image, RunLimits(timeout_seconds=30)).run(RunRequest(script=script))
    )
    assert final(events).outcome is Outcome.RESULT, events
    (result,) = of_type(events, "result")
    return result.data


def _own(directory: str) -> bool:
    return directory.startswith("/tmp/call-") and directory.count("/") == 2


async def test_each_call_has_a_fresh_directory_and_a_script_tool_works_below_it(
    image, runner
) -> None:
    first, second, node = await _result(
        runner, image, "emit_result([where().data, where().data, where_js().data])\n"
    )
    for seen in (first, second):
        assert _own(seen["cwd"]), seen
        assert seen["cwd"] == seen["tmpdir"] == seen["home"] == seen["child"], seen
        assert seen["empty"], seen  # nothing the first call left is in the second's
    assert first["cwd"] != second["cwd"]
    # node runs in its work dir, made in the call's directory; its temp dir is that work dir.
    call_dir, _, work_dir = node["cwd"].rpartition("/")
    assert _own(call_dir) and work_dir.startswith("scripttool-"), node
    assert node["tmpdir"] == node["cwd"] and node["home"] == call_dir, node


async def test_a_call_under_way_keeps_its_directory_through_a_call_made_during_it(
    image, runner
) -> None:
    script = (
        "inner = []\n"
        "def step(n):\n"
        "    inner.append(where().data)\n"
        "    return n\n"
        "outer = keep_through(map(step, [1, 2])).data\n"
        "emit_result({'outer': outer, 'inner': inner})\n"
    )
    data = await _result(runner, image, script)
    outer, inner = data["outer"], data["inner"]
    assert _own(outer["before"]) and outer["after"] == outer["before"], outer
    assert outer["note"] == "mine" and outer["seen"] == [1, 2], outer
    assert not outer["inner_left"], outer  # what the inner calls left went with them
    assert len(inner) == 2 and all(_own(seen["cwd"]) and seen["empty"] for seen in inner), inner
    assert outer["before"] not in {seen["cwd"] for seen in inner}
