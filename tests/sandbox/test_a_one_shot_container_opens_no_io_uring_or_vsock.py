"""A one-shot container (a script tool's trial, a bash run) has the harness's kernel surface.

Its command is no harness, so it never loaded the sandbox's seccomp filter: under Docker
20.10's default profile alone, a member's script tool on trial set up io_uring and connected
AF_VSOCK sockets to the machine's hypervisor (CID 2), which `network_mode="none"` leaves open.
The command now starts under the same filter as a harness (`sandbox/seccomp_exec.py`).
"""

from __future__ import annotations

import json
import platform
from dataclasses import replace

import pytest

from jazzmine.sandbox.containers import run_one_shot

from .helpers import IO_URING_VSOCK_PROBE

pytestmark = pytest.mark.docker

# As a script tool's code would, with nothing of the harness around it.
PROBE = "import json\n" + IO_URING_VSOCK_PROBE + "print(json.dumps(seen))\n"


@pytest.mark.skipif(platform.machine() != "x86_64", reason="raw syscall numbers of x86_64")
@pytest.mark.parametrize("network", [False, True])
async def test_a_one_shot_container_cannot_set_up_io_uring_or_open_a_vsock_socket(
    docker_client, image, limits, network
):
    result = await run_one_shot(
        image,
        ["python3", "-I", "-c", PROBE],
        stdin=b"",
        limits=replace(limits, network=network),
        timeout_seconds=30,
        client=docker_client,
    )
    assert result.error is None and result.exit_code == 0, result
    assert json.loads(result.stdout) == {"io_uring": "EPERM", "vsock": "EPERM"}


async def test_the_command_still_gets_its_stdin_its_exit_code_and_is_pid_1(
    docker_client, image, limits
):
    script = "import os, sys\nprint(os.getpid(), sys.stdin.read().strip())\nsys.exit(3)\n"
    result = await run_one_shot(
        image,
        ["python3", "-I", "-c", script],
        stdin=b"hello\n",
        limits=limits,
        timeout_seconds=30,
        client=docker_client,
    )
    assert (result.exit_code, result.stdout) == (3, "1 hello\n"), result
