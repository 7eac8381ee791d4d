"""A Docker sandbox's process holds at most as many open files as a bubblewrap one (256).

The host's file table (fs.file-max) is shared by every process of the machine, the database's
included. A Docker sandbox had the engine's default limit, 20 000 open files a process, and
kernel memory accounting let a 128 MiB sandbox of 20 processes hold some 400 000 of them: a
few runs (or a member's script tool on trial) would leave the host's other processes none
(ENFILE). A bubblewrap sandbox already held 256 a process (prlimit); both now share the limit.
"""

from __future__ import annotations

import json

import pytest

from jazzmine.sandbox import Outcome, RunRequest
from jazzmine.sandbox.containers import run_one_shot
from jazzmine.sandbox.pool import WarmPool
from jazzmine.sandbox.request import MAX_OPEN_FILES

from .helpers import collect, final, of_type

pytestmark = pytest.mark.docker

# Opens files until refused, then tries to raise its own limit (as root could, not nobody).
HOARD = """
import os, resource
opened = 0
try:
    while opened < 30000:
        os.open('/dev/null', os.O_RDONLY)
        opened += 1
except OSError:
    pass
try:
    resource.setrlimit(resource.RLIMIT_NOFILE, (65536, 65536))
    raised = 'raised'
except (OSError, ValueError):
    raised = 'refused'
"""


async def test_a_pooled_sandboxs_process_cannot_hold_more_than_its_share_of_open_files(
    hostile_runner, image, limits
):
    script = HOARD + "emit_result({'opened': opened, 'raised': raised})\n"
    async with WarmPool(hostile_runner, image, limits, size=1) as pool:
        events = await collect(pool.run(RunRequest(script=script, unrestricted=True)))
    assert final(events).outcome is Outcome.RESULT, events
    seen = of_type(events, "result")[0].data
    assert seen["opened"] < MAX_OPEN_FILES and seen["raised"] == "refused", seen


async def test_a_one_shot_containers_process_cannot_either(docker_client, image, limits):
    script = HOARD + "print(json.dumps({'opened': opened, 'raised': raised}))\n"
    result = await run_one_shot(
        image,
        ["python3", "-I", "-c", "import json\n" + script],
        stdin=b"",
        limits=limits,
        timeout_seconds=30,
        client=docker_client,
    )
    assert result.exit_code == 0, result
    seen = json.loads(result.stdout)
    assert seen["opened"] < MAX_OPEN_FILES and seen["raised"] == "refused", seen
