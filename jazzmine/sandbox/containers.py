"""Docker containers as every sandbox path makes them: hardened, labelled, attached, read.

Harness runs (cold or pooled), script-tool trials and bash runs all create their containers
here, so the walls (`host_config`), the labels (run and owner) and the reading of Docker's
multiplexed attach stream exist once. `run_one_shot` runs one command to its end: stdin in;
stdout, stderr and exit code out, under a wall clock and a cap on output.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import docker.errors

from .egress import IPV6_OFF, egress_network
from .engine import (
    ENGINE_ERRORS,
    EngineUnavailable,
    engine_remaps_users,
    engine_remaps_users_known,
    engine_unavailable,
)
from .events import memory_message
from .identity import USER_ENVIRONMENT, sandbox_user
from .owner import owner_labels
from .request import MAX_OPEN_FILES, RunLimits
from .session import ExitInfo
from .streams import CappedReader, Chunk, OutputLimited, Stream, TimedOut
from .syscalls import SeccompUnavailable, seccomp_program

RUN_LABEL = "jazzmine.run"
# Started as a one-shot container's first process: it loads the seccomp filter, then execs
# the command (`seccomp_exec.py`). Its source is read once, host-side; the image needs python3.
SECCOMP_EXEC_SOURCE = (Path(__file__).parent / "seccomp_exec.py").read_text(encoding="utf-8")
ONESHOT_LABEL = "jazzmine.oneshot"
REMOVE_ATTEMPTS = 5
# Docker's attach stream: each frame is an 8-byte header (stream id, 3 zero bytes, size).
_STREAMS: dict[int, Stream] = {1: "stdout", 2: "stderr"}
log = logging.getLogger(__name__)

LineFn = Callable[[str], None]


class ImageMissing(Exception):
    """The sandbox image is not built."""


def host_config(
    client: docker.DockerClient, limits: RunLimits, *, network: str | None = None
) -> dict[str, Any]:
    """Return the container walls of a run: network, filesystem, privileges, resources.

    A network-enabled run joins `network`, the filtered one of `egress.egress_network`
    (required then: Docker's default bridge reaches the host and its private network).
    """
    if limits.network and network is None:
        raise ValueError("a network-enabled sandbox needs its filtered network")
    memory = f"{limits.memory_mb}m"
    return client.api.create_host_config(
        network_mode=network if limits.network else "none",
        # Its network is IPv4 only, and the bridge's IPv6 link-local traffic would reach the
        # host: no IPv6 inside either.
        sysctls=IPV6_OFF if limits.network else None,
        read_only=True,
        tmpfs={"/tmp": f"rw,noexec,nosuid,nodev,size={limits.tmpfs_mb}m"},
        # Docker's /dev/shm is 64 MiB whatever the sandbox says; bubblewrap's is its tmpfs size.
        shm_size=f"{limits.tmpfs_mb}m",
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        mem_limit=memory,
        memswap_limit=memory,  # equal to memory: no swap to hide in
        nano_cpus=int(limits.cpus * 1_000_000_000),
        pids_limit=limits.pids_limit,
        ulimits=[
            docker.types.Ulimit(name="core", soft=0, hard=0),
            docker.types.Ulimit(name="nofile", soft=MAX_OPEN_FILES, hard=MAX_OPEN_FILES),
        ],
        # Output reaches the host over the attach socket only; a 100 MB print must not also
        # land in a json log file on the host's disk.
        log_config=docker.types.LogConfig(type="none"),
        ipc_mode="private",
    )


def remove_labelled(client: docker.DockerClient, label: str) -> int:
    """Force-remove every container carrying a label (`key` or `key=value`); return how many."""
    removed = 0
    for container in client.containers.list(all=True, filters={"label": label}):
        with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
            container.remove(force=True)
            removed += 1
    return removed


async def _created(client: docker.DockerClient, config: dict[str, Any]) -> dict[str, Any]:
    """Create a container from `config`; one a cancel interrupts is removed, not left behind.

    The engine's create goes on in its thread whatever happens to the caller: a run cancelled
    (or a worker stopping) during it would otherwise leave a container in `created` state that
    no label sweep of this worker's life ever looks for.
    """
    create = asyncio.ensure_future(
        asyncio.to_thread(client.api.create_container_from_config, config)
    )
    try:
        return await asyncio.shield(create)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            made = await create
            await asyncio.to_thread(client.api.remove_container, made["Id"], force=True)
        raise


class Container:
    """One hardened container, attached before it starts so that none of its output is lost."""

    def __init__(self, client: docker.DockerClient, container_id: str) -> None:
        self.client = client
        self.id = container_id
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._sock: socket.socket | None = None
        self._removed = False
        self._image_id: str | None = None

    @classmethod
    async def start(
        cls,
        client: docker.DockerClient,
        image: str,
        limits: RunLimits,
        *,
        labels: Mapping[str, str],
        environment: Mapping[str, str],
        command: Sequence[str] | None = None,
        working_dir: str | None = None,
    ) -> Container:
        """Create, attach and start a container of `image` inside the run's walls.

        It runs as a uid of its own (`identity`), never the image's user, whom every
        sandbox of the host would share.
        """
        network = None
        if limits.network:
            network = await asyncio.to_thread(egress_network, client)
        try:
            # Asked of the engine once per client, off the loop; known, no thread hop.
            remapped = engine_remaps_users_known(client)
            if remapped is None:
                remapped = await asyncio.to_thread(engine_remaps_users, client)
            # stdin_open without detach also sets StdinOnce: closing our end of stdin closes
            # the process's stdin (EOF), as `docker run -i` does.
            config = client.api.create_container_config(
                image,
                command=None if command is None else list(command),
                stdin_open=True,
                tty=False,
                user=sandbox_user(remapped=remapped),
                working_dir=working_dir,
                labels={RUN_LABEL: "1", **owner_labels(), **labels},
                environment={**USER_ENVIRONMENT, **environment},
                host_config=host_config(client, limits, network=network),
                network_disabled=not limits.network,
            )
            created = await _created(client, config)
        except docker.errors.ImageNotFound as exc:
            raise ImageMissing(f"image {image} is not built: {exc.explanation}") from exc
        except ENGINE_ERRORS as exc:
            raise engine_unavailable(exc) from exc
        container = cls(client, created["Id"])
        try:
            await container._attach_and_start()
        except BaseException:
            await container.remove()
            raise
        return container

    async def _attach_and_start(self) -> None:
        params = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
        try:
            raw = await asyncio.to_thread(self.client.api.attach_socket, self.id, params)
            # Attached before start, so nothing is buffered in the HTTP layer yet: the bare
            # socket can be handed to asyncio. dup() detaches it from the requests response.
            inner = getattr(raw, "_sock", raw)
            sock = inner.dup()
            for leftover in (raw, inner):
                with contextlib.suppress(Exception):
                    leftover.close()
            sock.setblocking(False)
            self._sock = sock
            self._reader, self._writer = await asyncio.open_connection(sock=sock)
            await asyncio.to_thread(self.client.api.start, self.id)
        except ENGINE_ERRORS as exc:
            raise EngineUnavailable(f"Docker engine failed to start a sandbox: {exc}") from exc

    async def image_id(self) -> str:
        """Return the id of the image this container was made from (asked once, then kept).

        A tag names whatever image carries it now: one removed and made again under the same
        tag can hold other files, while a container made before still runs the old one.
        """
        if self._image_id is None:
            try:
                attrs = await asyncio.to_thread(self.client.api.inspect_container, self.id)
            except ENGINE_ERRORS as exc:
                raise engine_unavailable(exc) from exc
            self._image_id = str(attrs["Image"])
        return self._image_id

    @property
    def alive(self) -> bool:
        """Tell whether the attached streams are still open (the container is running)."""
        return self._reader is not None and not self._reader.at_eof() and not self._removed

    async def read(self) -> Chunk | None:
        """Return the next frame of output, or None once the attach stream has ended."""
        assert self._reader is not None
        try:
            header = await self._reader.readexactly(8)
            payload = await self._reader.readexactly(int.from_bytes(header[4:8], "big"))
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        return _STREAMS.get(header[0], "stderr"), payload

    async def write(self, data: bytes) -> None:
        """Send bytes to the container's stdin."""
        assert self._writer is not None
        self._writer.write(data)
        await self._writer.drain()

    def close_stdin(self) -> None:
        """Close the container's stdin, as the end of a pipe does."""
        assert self._writer is not None
        if self._writer.can_write_eof():
            self._writer.write_eof()

    def hang_up(self) -> None:
        """Shut the attach connection down for every holder of it, then drop our end."""
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
        if self._writer is not None:
            self._writer.transport.abort()

    async def kill(self) -> None:
        """Kill the container now."""
        # Drop the attach stream first: with unread output queued on it the engine would
        # hold the kill until the stream drained (a minute for a 100 MB flood).
        self.hang_up()
        with contextlib.suppress(*ENGINE_ERRORS):
            await asyncio.to_thread(self.client.api.kill, self.id)

    async def wait(self) -> ExitInfo:
        """Wait for the container to stop and report its exit code and OOM kill."""
        status = await asyncio.to_thread(self.client.api.wait, self.id, 30)
        state = (await asyncio.to_thread(self.client.api.inspect_container, self.id))["State"]
        return ExitInfo(exit_code=status.get("StatusCode"), oom_killed=bool(state.get("OOMKilled")))

    async def remove(self) -> None:
        """Remove the container (killing it if needed) and close the socket."""
        if self._removed:
            return
        self._removed = True
        self.hang_up()
        for attempt in range(REMOVE_ATTEMPTS):
            try:
                await asyncio.to_thread(self.client.api.remove_container, self.id, force=True)
                return
            except docker.errors.NotFound:
                return
            except ENGINE_ERRORS as exc:
                # e.g. 409 while the engine is still tearing the killed container down
                log.warning(
                    "removing sandbox %s failed (attempt %d): %s", self.id[:12], attempt + 1, exc
                )
                await asyncio.sleep(0.2 * (attempt + 1))


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


async def run_one_shot(
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
        filtered = filtered_command(command, network=limits.network)
    except SeccompUnavailable as exc:
        return failed(f"cannot start a sandbox without its seccomp filter: {exc}")
    try:
        api = client if client is not None else docker.from_env()
        container = await Container.start(
            api,
            image,
            limits,
            command=filtered,
            # In the tmpfs: the image's own workdir is the harness's. The user is the
            # container's own (`Container.start`).
            working_dir="/tmp",
            environment={"HOME": "/tmp", "LANG": "C.UTF-8", **dict(environment or {})},
            labels={ONESHOT_LABEL: "1", **dict(labels or {})},
        )
    except ImageMissing:
        return failed(f"image {image} is not built")
    except EngineUnavailable as exc:
        return failed(str(exc))
    except ENGINE_ERRORS as exc:
        return failed(str(engine_unavailable(exc)))
    try:
        reader = CappedReader(
            container.read, deadline=started + timeout_seconds, max_bytes=limits.max_output_bytes
        )
        return await _collect(container, reader, stdin, limits, on_stdout_line, started)
    except ENGINE_ERRORS as exc:
        return failed(f"Docker engine failed during the run: {exc}")
    finally:
        await container.remove()


def filtered_command(command: Sequence[str], *, network: bool) -> list[str]:
    """Return `command` started under the sandbox's own seccomp filter, as a harness is.

    The engine's default profile alone lets io_uring and AF_VSOCK sockets through (Docker
    20.10), and what a one-shot container runs (a member's script tool on trial, the tools of
    a bash run) is no more trusted than a harness's tools. Raises SeccompUnavailable.
    """
    program = base64.b64encode(seccomp_program(network=network)).decode("ascii")
    return ["python3", "-I", "-c", SECCOMP_EXEC_SOURCE, program, *command]


async def _collect(
    container: Container,
    reader: CappedReader,
    stdin: bytes,
    limits: RunLimits,
    on_stdout_line: LineFn | None,
    started: float,
) -> ContainerResult:
    """Feed stdin, gather the output until the container ends or is cut, and say how it ended."""
    out = bytearray()
    err = bytearray()
    line_buffer = bytearray()
    timed_out = output_limited = False
    await container.write(stdin)
    container.close_stdin()  # the process sees EOF on stdin, as with `echo ... | cmd`
    try:
        while (item := await reader.read()) is not None:
            stream, payload = item
            if stream == "stderr":
                err += payload
                continue
            out += payload
            if on_stdout_line is not None:
                line_buffer += payload
                if b"\n" not in payload:
                    # Split only once a line ends: a split per frame rescans the whole line,
                    # seconds of the host's CPU for one 8 MiB line in 32 KiB frames.
                    continue
                *lines, rest = bytes(line_buffer).split(b"\n")
                line_buffer = bytearray(rest)
                for line in lines:
                    on_stdout_line(line.decode("utf-8", "replace"))
    except TimedOut:
        timed_out = True
    except OutputLimited:
        output_limited = True
    if timed_out or output_limited:
        await container.kill()
    else:
        container.hang_up()
    info = await container.wait()
    result = ContainerResult(
        exit_code=info.exit_code,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        duration_ms=round((time.monotonic() - started) * 1000, 1),
        timed_out=timed_out,
        oom_killed=info.oom_killed,
        output_limited=output_limited,
    )
    if result.oom_killed:
        result.notes.append(memory_message(limits.memory_mb))
    if output_limited:
        result.notes.append(f"output limit of {limits.max_output_bytes} bytes reached: killed")
    return result
