"""A container's kernel surface: no io_uring, no vsock, whatever the engine's default allows.

Docker 20.10's default seccomp profile allows io_uring_setup (whose operations no seccomp
filter sees) and socket(AF_VSOCK) (not network-namespaced: `network_mode="none"` does not
cover it, and it reaches the machine's hypervisor). The harness loads the sandbox's own
filter on top of the engine's as it starts (`jazzmine.sandbox.syscalls`), as bubblewrap does.
Probed with full Python (unrestricted), so only the third wall stands.
"""

from __future__ import annotations

import platform
from dataclasses import replace

import pytest

from jazzmine.sandbox import Outcome, RunRequest

from .helpers import IO_URING_VSOCK_PROBE, collect, final, of_type

pytestmark = pytest.mark.docker

PROBE = IO_URING_VSOCK_PROBE + "emit_result(seen)\n"


@pytest.mark.skipif(platform.machine() != "x86_64", reason="raw syscall numbers of x86_64")
@pytest.mark.parametrize("network", [False, True])
async def test_a_container_cannot_set_up_io_uring_or_open_a_vsock_socket(
    hostile_runner, image, limits, network
):
    runner = hostile_runner.bind(image, replace(limits, network=network))
    events = await collect(runner.run(RunRequest(script=PROBE, unrestricted=True)))
    assert final(events).outcome is Outcome.RESULT, events
    seen = of_type(events, "result")[0].data
    assert seen == {"io_uring": "EPERM", "vsock": "EPERM"}, seen


async def test_the_filter_is_out_of_the_scripts_sight_and_the_sandbox_still_works(
    hostile_runner, image, limits
):
    script = (
        "import os, subprocess, threading\n"
        "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
        "out = subprocess.run(['python3', '-c', 'print(6 * 7)'], capture_output=True).stdout\n"
        "emit_result({'env': sorted(k for k in os.environ if 'SECCOMP' in k), 'out': out.decode()})\n"
    )
    events = await collect(
        hostile_runner.bind(image, limits).run(RunRequest(script=script, unrestricted=True))
    )
    assert final(events).outcome is Outcome.RESULT, events
    assert of_type(events, "result")[0].data == {"env": [], "out": "42\n"}
