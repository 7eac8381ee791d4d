"""The Docker backend: hardened containers whose harness is reached over an attached socket."""

from __future__ import annotations

import asyncio
import base64
import json
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable

import docker

from .containers import Container, ImageMissing
from .containers import remove_labelled as remove_labelled  # the run worker imports it here
from .engine import ENGINE_ERRORS, EngineUnavailable, engine_client
from .errors import SandboxStale, UnrestrictedRefused
from .events import Event, Outcome, error_data
from .harness import SECCOMP_ENV, UNRESTRICTED_ENV
from .request import RunLimits, RunRequest
from .session import ExitInfo, RunState, drive, engine_unavailable
from .streams import Chunk
from .syscalls import SeccompUnavailable, seccomp_program

POOL_LABEL = "jazzmine.pool"
# Makes a run's missing image again; True: it exists now and the start may be tried once more.
Remake = Callable[[], Awaitable[bool]]
# Given the id of the image a sandbox about to serve a run was made from, return the request
# to send it: what goes in may depend on what that image holds (its wheels). May raise
# `SandboxStale`: that sandbox is removed and the run gets another.
Vet = Callable[[str], Awaitable[RunRequest]]
# How many sandboxes one run may find stale before its start fails: the tag moved that often
# while it waited.
STALE_ATTEMPTS = 3
READY_TIMEOUT = 60.0


class DockerProcess:
    """One container running the harness, attached, ready for exactly one request."""

    backend = "docker"

    def __init__(self, container: Container) -> None:
        self.container = container
        self._early: deque[Chunk] = deque()

    @classmethod
    async def ready(cls, container: Container) -> DockerProcess:
        """Wait until the harness of a started container is ready; remove it if it never is."""
        process = cls(container)
        try:
            # Not `wait_for`, which on Python 3.11 drops a cancel that comes with the answer.
            async with asyncio.timeout(READY_TIMEOUT):
                await process._await_ready()
        except BaseException:
            await container.remove()
            raise
        return process

    async def _await_ready(self) -> None:
        """Read until the harness's ready line; keep anything after it for the run."""
        pending = b""
        while True:
            item = await self.container.read()
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
    def id(self) -> str:
        """Return the container's id."""
        return self.container.id

    @property
    def alive(self) -> bool:
        """Tell whether the attached streams are still open (the container is running)."""
        return self.container.alive

    async def write(self, data: bytes) -> None:
        """Send bytes to the harness's stdin."""
        await self.container.write(data)

    async def read(self) -> Chunk | None:
        """Return the next output chunk, or None at the end of the streams."""
        if self._early:
            return self._early.popleft()
        return await self.container.read()

    async def kill(self) -> None:
        """Kill the container now."""
        await self.container.kill()

    async def wait(self) -> ExitInfo:
        """Wait for the container to stop and report its exit code and OOM kill."""
        try:
            return await self.container.wait()
        except ENGINE_ERRORS:
            return ExitInfo(exit_code=None)

    async def remove(self) -> None:
        """Remove the container (killing it if needed) and close the socket."""
        await self.container.remove()


class DockerRunner:
    """The Docker backend: an engine connection and the policy its sandboxes start under."""

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
            self._client = engine_client(max_pool_size=64)
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
        # The sandbox's own seccomp filter, loaded by the harness on top of the engine's
        # profile (which lets io_uring and vsock through on some engines). Compiled here, for
        # this host's kernel; no filter, no sandbox (SeccompUnavailable).
        try:
            program = seccomp_program(network=limits.network)
        except SeccompUnavailable as exc:
            raise EngineUnavailable(
                f"cannot start a sandbox without its seccomp filter: {exc}"
            ) from exc
        environment[SECCOMP_ENV] = base64.b64encode(program).decode("ascii")
        container = await Container.start(
            self.client, image, limits, labels=dict(labels or {}), environment=environment
        )
        return await DockerProcess.ready(container)

    def bind(self, image: str, limits: RunLimits) -> DockerOneShot:
        """Return the runner of one image and limits: a fresh container for every request."""
        return DockerOneShot(self, image, limits)


class DockerOneShot:
    """A `Runner` that starts a new container of one image for each request (a cold start)."""

    backend = "docker"

    def __init__(self, runner: DockerRunner, image: str, limits: RunLimits) -> None:
        self.runner = runner
        self.image = image
        self.limits = limits

    async def run(
        self, request: RunRequest, *, remake: Remake | None = None, vet: Vet | None = None
    ) -> AsyncIterator[Event]:
        """Run one request in a new container and yield its events as they arrive.

        A container that could not start because the image is gone is started once more
        after `remake` made the image again and said so. With `vet`, the request sent is the
        one it returns for the container's image.
        """
        self.runner.check(request)
        for attempt in range(1, STALE_ATTEMPTS + 1):
            try:
                try:
                    process = await self._start()
                except ImageMissing:
                    if remake is None or not await remake():
                        raise
                    process = await self._start()
            except (EngineUnavailable, ImageMissing) as exc:
                for event in start_failure(self.backend, exc):
                    yield event
                return
            sent = await vetted(process, request, vet, last=attempt == STALE_ATTEMPTS)
            if sent is not None:
                break  # else the tag moved between its start and now: start afresh
        try:
            async for event in drive(process, sent, self.limits):
                yield event
        finally:
            await process.remove()

    async def _start(self) -> DockerProcess:
        return await self.runner.start_process(self.image, self.limits, labels={POOL_LABEL: "none"})


async def vetted(
    process: DockerProcess, request: RunRequest, vet: Vet | None, *, last: bool
) -> RunRequest | None:
    """Return the request to send a sandbox, as `vet` has it for its image.

    None when `vet` found the sandbox stale: it is removed, and the caller takes another
    (unless this was its `last` try: then SandboxStale goes up). Removed too on any failure.
    """
    if vet is None:
        return request
    try:
        return await vet(await process.container.image_id())
    except SandboxStale:
        await process.remove()
        if last:
            raise
        return None
    except BaseException:
        await process.remove()
        raise


def start_failure(backend: str, exc: Exception) -> list[Event]:
    """Return the events ending a run whose sandbox could not start."""
    if isinstance(exc, ImageMissing):
        state = RunState(backend)
        return [
            state.event("error", error_data(Outcome.BUILD_FAILED, str(exc))),
            state.final(Outcome.BUILD_FAILED, str(exc)),
        ]
    return engine_unavailable(backend, str(exc))
