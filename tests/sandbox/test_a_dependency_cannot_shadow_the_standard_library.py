"""A sandbox's wheels come after the standard library on the worker's path, and the modules the
harness imports before `ready` are imported before the wheels are on the path at all.

Before, the worker put `<root>/site` ahead of the standard library and then imported
`_strptime`: a wheel shipping `_strptime.py` ran in the worker, hooked `os.environ` and logged
every secret the harness set. Its tools still import what the wheels bring.

The harness runs as a plain subprocess over a staged runtime, the wheel's files put in its
`site/` as the builder unpacks them; one test builds a real image from a local index.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jazzmine.core.tools import SandboxConfig, ToolRegistry, ToolResponse
from jazzmine.sandbox import RunLimits, RunRequest, SandboxBuilder
from jazzmine.sandbox.builder import BuildPolicy
from jazzmine.sandbox.docker_runner import DockerRunner
from jazzmine.sandbox.harness import SHARED_MACHINE_ENV
from jazzmine.sandbox.runtime import stage_runtime
from jazzmine.sandbox.wheels import PipIndexes
from tests.hostile_wheels import LEAK_MARK, PAYLOAD, hostile_index

SANDBOX = "shadowed-stdlib"
SECRET = "shop-s3cret-1717"


def parse_a_date(text: str) -> ToolResponse:
    """Parse a date (datetime.strptime imports _strptime), and use the sandbox's wheel."""
    import datetime
    import sys

    import jzgood

    parsed = datetime.datetime.strptime(text, "%Y-%m-%d").date().isoformat()
    return ToolResponse(
        success=True,
        data={"date": parsed, "strptime": sys.modules["_strptime"].__file__, "wheel": jzgood.OK},
    )


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Path:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=SANDBOX, secrets=["SHOP_KEY"]))
    registry.register_function(parse_a_date, description="Parse a date.", parameters=[],
                               dependencies=[], secrets=[], sandbox=SANDBOX)  # fmt: skip
    root = stage_runtime(tmp_path_factory.mktemp("runtime"), registry.tools(SANDBOX))
    # What unpacking the hostile wheel and an ordinary one leaves in site/.
    (root / "site" / "_strptime.py").write_text(PAYLOAD)
    (root / "site" / "jzgood").mkdir()
    (root / "site" / "jzgood" / "__init__.py").write_text("OK = 'from the wheel'\n")
    return root


def run(runtime: Path, script: str) -> list[dict]:
    request = RunRequest(script=script, secrets={"SHOP_KEY": SECRET})
    done = subprocess.run(
        [sys.executable, "-I", str(runtime / "harness.py"), str(runtime)],
        input=request.to_line(30.0), capture_output=True, timeout=30,
        env={"PATH": os.environ["PATH"], SHARED_MACHINE_ENV: "1"}, check=False,
    )  # fmt: skip
    return [json.loads(x) for x in done.stdout.decode().splitlines()]


def test_a_wheel_shipping_a_standard_module_never_runs_in_the_worker(runtime):
    events = run(runtime, "emit_result(parse_a_date('2024-02-29').data)\n")
    text = json.dumps(events)
    assert LEAK_MARK not in text and SECRET not in text
    (result,) = [e["data"] for e in events if e["type"] == "result"]
    assert result["date"] == "2024-02-29"
    # The standard library's own module, not the wheel's.
    assert result["strptime"] == os.path.join(os.path.dirname(os.__file__), "_strptime.py")


def test_tools_still_import_what_the_sandboxs_wheels_bring(runtime):
    events = run(runtime, "emit_result(parse_a_date('2024-01-02').data['wheel'])\n")
    assert [e["data"] for e in events if e["type"] == "result"] == ["from the wheel"]


def test_the_wheels_go_after_the_standard_library_and_before_the_interpreters_packages():
    from jazzmine.sandbox.harness.worker import site_position

    stdlib = ["/usr/lib/python311.zip", "/usr/lib/python3.11", "/usr/lib/python3.11/lib-dynload"]
    debian = [*stdlib, "/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages"]
    assert site_position(["/opt/jazzmine", *debian]) == 4
    assert site_position(["/opt/jazzmine", *stdlib, "/venv/lib/python3.11/site-packages"]) == 4
    assert site_position(["/opt/jazzmine", *stdlib]) == 4  # `python3 -I -S`: at the end


@pytest.mark.docker
def test_in_a_real_image_built_from_an_index_the_wheel_reads_no_secret(docker_client, tmp_path):
    registry = ToolRegistry()
    config = SandboxConfig(name=SANDBOX, secrets=["SHOP_KEY"], dependencies=["jzevil==1.0"])
    registry.register_sandbox(config)
    index = hostile_index(tmp_path / "index")
    builder = SandboxBuilder(registry, client=docker_client, cache_dir=tmp_path / "cache",
                             policy=BuildPolicy(indexes=PipIndexes(index_url=index)))  # fmt: skip
    tag = builder.ensure_image(SANDBOX).tag
    # datetime.strptime is where the harness's early `_strptime` import is for.
    script = "emit_result(datetime.datetime.strptime('2024-02-29', '%Y-%m-%d').day)\n"
    request = RunRequest(script=script, secrets={"SHOP_KEY": SECRET})

    async def events() -> list:
        runner = DockerRunner(docker_client).bind(tag, RunLimits(memory_mb=128, timeout_seconds=20))
        return [event async for event in runner.run(request)]

    try:
        found = asyncio.run(events())
    finally:
        docker_client.images.remove(tag, force=True)  # it holds the hostile wheel
    text = repr([(e.type, e.data) for e in found])
    assert LEAK_MARK not in text and SECRET not in text
    assert [e.data for e in found if e.type == "result"] == [29]
