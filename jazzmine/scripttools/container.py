"""Run one command in a hardened one-shot container: stdin in, stdout/stderr/exit code out.

The sandbox's `DockerRunner` speaks the harness protocol only (its containers run the harness
and wait for a run request), so script tools and bash runs need a container with their own
command. The walls are the sandbox's own: `jazzmine.sandbox.docker_runner.host_config` (no
network, read-only root, tmpfs /tmp, cap-drop ALL, no-new-privileges, memory/CPU/pids limits)
plus the sandbox user, a wall-clock timeout that kills and a cap on output.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import docker
import docker.errors

from jazzmine.sandbox.builder import SANDBOX_USER
from jazzmine.sandbox.docker_runner import ENGINE_ERRORS, RUN_LABEL, host_config
from jazzmine.sandbox.events import memory_message
from jazzmine.sandbox.owner import owner_labels
from jazzmine.sandbox.request import RunLimits

LineFn = Callable[[str], None]
_STREAMS = {1: "stdout", 2: "stderr"}


@dataclass
class ContainerResult:
    """How a one-shot container ended and what it printed."""

    exit_code: int | None
    stdout: str
    stderr: str
    duration_ms: float
    timed_out: bool = False
    oom_killed: bool = False
    output_limited: bool = False
    # Set when no container could run at all (engine down, image missing).
    error: str | None = None
    notes: list[str] = field(default_factory=list)


def _client(client: docker.DockerClient | None) -> docker.DockerClient:
    return client if client is not None else docker.from_env()


async def run_container(
    image: str,
    command: Sequence[str],
    *,
    stdin: bytes,
    limits: RunLimits,
    timeout_seconds: float,
    environment: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    on_stdout_line: LineFn | None = None,
    client: docker.DockerClient | None = None,
) -> ContainerResult:
    """Run `command` in a new hardened container from `image`, feeding `stdin`, then remove it."""
    started = time.monotonic()

    def failed(message: str) -> ContainerResult:
        elapsed = (time.monotonic() - started) * 1000
        return ContainerResult(None, "", "", round(elapsed, 1), error=message)

    try:
        api = _client(client)
        config = api.api.create_container_config(
            image,
            command=list(command),
            stdin_open=True,
            tty=False,
            user=SANDBOX_USER,
            working_dir="/tmp",
            environment={"HOME": "/tmp", "LANG": "C.UTF-8", **dict(environment or {})},
            labels={
                RUN_LABEL: "1",
                "jazzmine.oneshot": "1",
                **owner_labels(),
                **dict(labels or {}),
            },
            host_config=host_config(api, limits),
            network_disabled=not limits.network,
        )
        # StdinOnce: closing our end of stdin closes the process's stdin (EOF), as `docker
        # run -i` does; create_container() has no argument for it.
        config["StdinOnce"] = True
        created = await asyncio.to_thread(api.api.create_container_from_config, config)
    except docker.errors.ImageNotFound:
        return failed(f"image {image} is not built")
    except ENGINE_ERRORS as exc:
        return failed(f"Docker engine unavailable: {exc}")
    container_id = created["Id"]
    try:
        return await _drive(
            api, container_id, stdin, limits, timeout_seconds, on_stdout_line, started
        )
    except ENGINE_ERRORS as exc:
        return failed(f"Docker engine failed during the run: {exc}")
    finally:
        with contextlib.suppress(*ENGINE_ERRORS):
            await asyncio.to_thread(api.api.remove_container, container_id, force=True)


async def _drive(
    api: docker.DockerClient,
    container_id: str,
    stdin: bytes,
    limits: RunLimits,
    timeout_seconds: float,
    on_stdout_line: LineFn | None,
    started: float,
) -> ContainerResult:
    params = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
    raw = await asyncio.to_thread(api.api.attach_socket, container_id, params)
    # Attached before start so no output is lost; dup() frees the socket from requests.
    sock = getattr(raw, "_sock", raw).dup()
    with contextlib.suppress(Exception):
        raw.close()
    sock.setblocking(False)
    reader, writer = await asyncio.open_connection(sock=sock)
    out = bytearray()
    err = bytearray()
    line_buffer = bytearray()
    timed_out = output_limited = False
    try:
        await asyncio.to_thread(api.api.start, container_id)
        writer.write(stdin)
        await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()  # the process sees EOF on stdin, as with `echo ... | cmd`
        deadline = started + timeout_seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            try:
                header = await asyncio.wait_for(reader.readexactly(8), remaining)
                size = int.from_bytes(header[4:8], "big")
                payload = await asyncio.wait_for(reader.readexactly(size), remaining)
            except TimeoutError:
                timed_out = True
                break
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            if len(out) + len(err) + len(payload) > limits.max_output_bytes:
                output_limited = True
                break
            if _STREAMS.get(header[0]) == "stdout":
                out += payload
                if on_stdout_line is not None:
                    line_buffer += payload
                    *lines, rest = bytes(line_buffer).split(b"\n")
                    line_buffer = bytearray(rest)
                    for line in lines:
                        on_stdout_line(line.decode("utf-8", "replace"))
            else:
                err += payload
    finally:
        writer.close()
    if timed_out or output_limited:
        with contextlib.suppress(*ENGINE_ERRORS):
            await asyncio.to_thread(api.api.kill, container_id)
    status = await asyncio.to_thread(api.api.wait, container_id, 30)
    state = (await asyncio.to_thread(api.api.inspect_container, container_id))["State"]
    duration = round((time.monotonic() - started) * 1000, 1)
    result = ContainerResult(
        exit_code=status.get("StatusCode"),
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        duration_ms=duration,
        timed_out=timed_out,
        oom_killed=bool(state.get("OOMKilled")),
        output_limited=output_limited,
    )
    if result.oom_killed:
        result.notes.append(memory_message(limits.memory_mb))
    if output_limited:
        result.notes.append(f"output limit of {limits.max_output_bytes} bytes reached: killed")
    return result
