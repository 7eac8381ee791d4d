"""In a bash run too, the sandbox's wheels come after the standard library.

The harness puts `<root>/site` after the standard library (tests/sandbox/test_a_dependency_
cannot_shadow_the_standard_library.py), but the bash runner put it, and bashkit's own `site`,
first on its path: any wheel of the image shipping a module named like one of the standard
library's (`jzevil` ships `_strptime.py`) ran in the bash worker in its place, where every
secret of the run is set, whether or not any tool imports that package. Its tools still
import what the wheels bring.
"""

from __future__ import annotations

import json

import pytest

from jazzmine.bash import specs_for_sandbox
from jazzmine.bash.sandbox import run_bash_in_sandbox
from jazzmine.core.tools import SandboxConfig, ToolParameter, ToolRegistry
from jazzmine.sandbox import SandboxBuilder
from jazzmine.sandbox.builder import DERIVED_FROM_LABEL, BuildPolicy
from jazzmine.sandbox.wheels import PipIndexes
from tests.hostile_wheels import LEAK_MARK, hostile_index

pytestmark = pytest.mark.docker

SANDBOX = "shadowed-stdlib-bash"
SECRET = "shop-s3cret-1717"
PARSE_A_DATE = """
def parse_a_date(text: str) -> ToolResponse:
    import datetime
    import os
    import sys

    import jzevil

    day = datetime.datetime.strptime(text, "%Y-%m-%d").day
    return ToolResponse(success=True, data={
        "day": day, "strptime": sys.modules["_strptime"].__file__, "wheel": jzevil.VERSION,
        "key": bool(os.environ.get("SHOP_KEY")),
    })
"""


@pytest.fixture(scope="module")
def sandbox(docker_client, base_image, tmp_path_factory):
    registry = ToolRegistry()
    config = SandboxConfig(name=SANDBOX, secrets=["SHOP_KEY"], dependencies=["jzevil==1.0"])
    registry.register_sandbox(config)
    registry.register_source(
        PARSE_A_DATE, sandbox=SANDBOX, description="Parse a date.",
        parameters=[ToolParameter("text", "str", "A date", required=True)],
    )  # fmt: skip
    index = hostile_index(tmp_path_factory.mktemp("index"))
    builder = SandboxBuilder(registry, client=docker_client,
                             cache_dir=tmp_path_factory.mktemp("cache"),
                             policy=BuildPolicy(indexes=PipIndexes(index_url=index)))  # fmt: skip
    tag = builder.ensure_image(SANDBOX).tag
    yield tag, specs_for_sandbox(registry, SANDBOX)
    # Both hold the hostile wheel: the bash image built on the sandbox's, then the sandbox's.
    for derived in docker_client.images.list(filters={"label": f"{DERIVED_FROM_LABEL}={tag}"}):
        docker_client.images.remove(derived.id, force=True)
    docker_client.images.remove(tag, force=True)


async def test_a_wheel_shipping_a_standard_module_never_runs_in_the_bash_worker(
    sandbox, docker_client
) -> None:
    image, specs = sandbox
    result = await run_bash_in_sandbox(
        "parse_a_date --text 2024-02-29", sandbox_image=image, specs=specs,
        client=docker_client, secrets={"SHOP_KEY": SECRET},
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert LEAK_MARK not in result.stdout + result.stderr and SECRET not in result.stdout
    found = json.loads(result.stdout)
    assert found["day"] == 29 and found["key"]
    # The standard library's own module, not the wheel's; the wheel's package still imports.
    assert found["strptime"].startswith("/usr/lib/python3"), found["strptime"]
    assert found["wheel"] == "1.0"
