"""The Docker backend: hardened containers whose harness is reached over an attached socket."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import docker
import docker.errors
import requests.exceptions

from .errors import UnrestrictedRefused
from .events import Event, Outcome, error_data
from .harness import UNRESTRICTED_ENV
from .owner import owner_labels
from .request import RunLimits, RunRequest
from .session import ExitInfo, RunState, Stream, drive, engine_unavailable

RUN_LABEL = "jazzmine.run"
POOL_LABEL = "jazzmine.pool"
READY_TIMEOUT = 60.0
REMOVE_ATTEMPTS = 5
log = logging.getLogger(__name__)
ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException, OSError)
_STREAMS: dict[int, Stream] = {1: "stdout", 2: "stderr"}


class EngineUnavailable(Exception):
    """The Docker engine could not be reached or refused to start a sandbox."""


class ImageMissing(Exception):
    """The sandbox image is not built."""


def host_config(client: docker.DockerClient, limits: RunLimits) -> dict[str, Any]:
    """Return the container walls of a run: network, filesystem, privileges, resources."""
    memory = f"{limits.memory_mb}m"
    return client.api.create_host_config(
        network_mode="bridge" if limits.network else "none",
        read_only=True,
        tmpfs={"/tmp": f"rw,noexec,nosuid,nodev,size={limits.tmpfs_mb}m"},
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        mem_limit=memory,
        memswap_limit=memory,  # equal to memory: no swap to hide in
        nano_cpus=int(limits.cpus * 1_000_000_000),
        pids_limit=limits.pids_limit,
        ulimits=[docker.types.Ulimit(name="core", soft=0, hard=0)],
        # Output reaches the host over the attach socket only; a 100 MB print must not also
        # land in a json log file on the host's disk.
        log_config=docker.types.LogConfig(type="none"),
        ipc_mode="private",
    )


class DockerProcess:
    """One container running the harness, attached, ready for exactly one request."""

    backend = "docker"

    def __init__(self, client: docker.DockerClient, container_id: str) -> None:
        self.client = client
        self.id = container_id
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._early: deque[tuple[Stream, bytes]] = deque()
        self._removed = False
        self._sock: socket.socket | None = None

    @classmethod
    async def start(
        cls,
        client: docker.DockerClient,
        image: str,
        limits: RunLimits,
        *,
        labels: dict[str, str],
        environment: dict[str, str],
    ) -> DockerProcess:
        """Create, attach and start a container, and wait until its harness is ready."""
        try:
            created = await asyncio.to_thread(
                client.api.create_container,
                image,
                stdin_open=True,
                tty=False,
                labels={RUN_LABEL: "1", **owner_labels(), **labels},
                environment=environment,
                host_config=host_config(client, limits),
                network_disabled=not limits.network,
            )
        except docker.errors.ImageNotFound as exc:
            raise ImageMissing(f"image {image} is not built: {exc.explanation}") from exc
        except ENGINE_ERRORS as exc:
            raise EngineUnavailable(f"Docker engine unavailable: {exc}") from exc
        process = cls(client, created["Id"])
        try:
            await process._attach_and_start()
            await asyncio.wait_for(process._await_ready(), READY_TIMEOUT)
        except BaseException:
            await process.remove()
            raise
        return process

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

    async def _await_ready(self) -> None:
        """Read until the harness's ready line; keep anything after it for the run."""
        pending = b""
        while True:
            item = await self._read_frame()
            if item is None:
                raise EngineUnavailable("the sandbox exited before its harness was ready")
            stream, chunk = item
            if stream == "stderr":
                continue
            pending += chunk
            if b"\n" in pending:
                line, rest = pending.split(b"\n", 1)
                try:
                    ready = json.loads(line).get("type") == "ready"
                except ValueError:
                    ready = False
                if not ready:
                    raise EngineUnavailable(
                        f"the harness did not announce readiness: {line[:200]!r}"
                    )
                if rest:
                    self._early.append(("stdout", rest))
                return

    @property
    def alive(self) -> bool:
        """Tell whether the attached streams are still open (the container is running)."""
        return self._reader is not None and not self._reader.at_eof() and not self._removed

    async def _read_frame(self) -> tuple[Stream, bytes] | None:
        assert self._reader is not None
        try:
            header = await self._reader.readexactly(8)
            payload = await self._reader.readexactly(int.from_bytes(header[4:8], "big"))
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        return _STREAMS.get(header[0], "stderr"), payload

    async def write(self, data: bytes) -> None:
        """Send bytes to the harness's stdin."""
        assert self._writer is not None
        self._writer.write(data)
        await self._writer.drain()

    async def read(self) -> tuple[Stream, bytes] | None:
        """Return the next output chunk, or None at the end of the streams."""
        if self._early:
            return self._early.popleft()
        return await self._read_frame()

    async def kill(self) -> None:
        """Kill the container now."""
        # Drop the attach stream first: with unread output queued on it the engine would
        # hold the kill until the stream drained (a minute for a 100 MB flood).
        self._hang_up()
        with contextlib.suppress(*ENGINE_ERRORS):
            await asyncio.to_thread(self.client.api.kill, self.id)

    def _hang_up(self) -> None:
        """Shut the attach connection down for every holder of it, then drop our end."""
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
        if self._writer is not None:
            self._writer.transport.abort()

    async def wait(self) -> ExitInfo:
        """Wait for the container to stop and report its exit code and OOM kill."""
        try:
            status = await asyncio.to_thread(self.client.api.wait, self.id, 30)
            state = (await asyncio.to_thread(self.client.api.inspect_container, self.id))["State"]
        except ENGINE_ERRORS:
            return ExitInfo(exit_code=None)
        return ExitInfo(exit_code=status.get("StatusCode"), oom_killed=bool(state.get("OOMKilled")))

    async def remove(self) -> None:
        """Remove the container (killing it if needed) and close the socket."""
        if self._removed:
            return
        self._removed = True
        self._hang_up()
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


class DockerRunner:
    """Run scripts in fresh hardened containers (cold), or start processes for a warm pool."""

    backend = "docker"

    def __init__(
        self, client: docker.DockerClient | None = None, *, allow_unrestricted: bool = False
    ) -> None:
        self._client = client
        self.allow_unrestricted = allow_unrestricted

    @property
    def client(self) -> docker.DockerClient:
        """Return the Docker client, connecting on first use (raises EngineUnavailable)."""
        if self._client is None:
            try:
                self._client = docker.from_env(max_pool_size=64)
            except ENGINE_ERRORS as exc:
                raise EngineUnavailable(f"Docker engine unavailable: {exc}") from exc
        return self._client

    def check(self, request: RunRequest) -> None:
        """Refuse what this runner may not run."""
        if request.unrestricted and not self.allow_unrestricted:
            raise UnrestrictedRefused(
                "unrestricted runs need a runner with allow_unrestricted=True"
            )

    async def start_process(
        self, image: str, limits: RunLimits, *, labels: dict[str, str] | None = None
    ) -> DockerProcess:
        """Start one ready container for a later request."""
        environment = {UNRESTRICTED_ENV: "1"} if self.allow_unrestricted else {}
        return await DockerProcess.start(
            self.client, image, limits, labels=dict(labels or {}), environment=environment
        )

    async def run(self, image: str, request: RunRequest, limits: RunLimits) -> AsyncIterator[Event]:
        """Run one request in a new container and yield its events as they arrive."""
        self.check(request)
        try:
            process = await self.start_process(image, limits, labels={POOL_LABEL: "none"})
        except (EngineUnavailable, ImageMissing) as exc:
            for event in start_failure(self.backend, exc):
                yield event
            return
        try:
            async for event in drive(process, request, limits):
                yield event
        finally:
            await process.remove()


def start_failure(backend: str, exc: Exception) -> list[Event]:
    """Return the events ending a run whose sandbox could not start."""
    if isinstance(exc, ImageMissing):
        state = RunState(backend)
        return [
            state.event("error", error_data(Outcome.BUILD_FAILED, str(exc))),
            state.final(Outcome.BUILD_FAILED, str(exc)),
        ]
    return engine_unavailable(backend, str(exc))


def remove_labelled(client: docker.DockerClient, label: str) -> int:
    """Force-remove every container carrying a label (`key` or `key=value`); return how many."""
    removed = 0
    for container in client.containers.list(all=True, filters={"label": label}):
        with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
            container.remove(force=True)
            removed += 1
    return removed
