"""Build one Docker image per sandbox, tagged by its checksum, only when that tag is missing."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import docker.errors

from ..core.tools.registry import DEFAULT_BASE_IMAGE
from ..interrupts import Interrupt
from .commands import run_logged
from .engine import engine_client
from .errors import BuildError
from .runtime import runtime_version, stage_runtime
from .wheel_limits import WheelLimits
from .wheels import (
    PROBE,
    WHEELS_LABEL,
    WHEELS_LIST_LABEL,
    PipIndexes,
    WheelTarget,
    download_wheels,
    unpack_wheels,
    wheel_lines,
    wheels_digest,
    wheels_from_labels,
)
from .workdirs import workdir_held

LogFn = Callable[[str], None]
KEEP_IMAGES = 3  # images kept per sandbox: the current one and two to roll back to quickly
SANDBOX_USER = "65534:65534"  # nobody:nogroup, present in every Debian-based image
RUNTIME_DIR = "/opt/jazzmine"
ENSURE_BASE_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ensure-base-image.sh"

# Strip what a sandbox must not have, whatever base image a team picks (python:3.11-slim
# ships pip; Debian ships apt). Setuid bits go too: no-new-privileges is the runtime wall,
# this is the belt under it. Precompiling makes the harness start faster on a read-only root.
_HARDEN = (
    "rm -rf /usr/bin/apt /usr/bin/apt-get /usr/bin/apt-cache /usr/bin/apt-key /usr/bin/pip* "
    "/usr/local/bin/pip* /usr/lib/python3/dist-packages/pip /usr/local/lib/python3*/site-packages/pip "
    "/usr/bin/curl /usr/bin/wget /usr/bin/nc /usr/bin/ncat /usr/bin/ssh /usr/bin/scp "
    "/usr/bin/gcc* /usr/bin/cc /usr/bin/c++ /usr/bin/g++* /usr/bin/*-linux-gnu-gcc* "
    "&& find / -xdev -type f -perm /6000 -exec chmod a-s {} + "
    f"&& python3 -m compileall -q {RUNTIME_DIR} >/dev/null "
    f"&& chmod -R a+rX,go-w {RUNTIME_DIR}"
)


@dataclass(frozen=True)
class BuildPolicy:
    """The operator's walls around builds: which base images exist, pulls, package indexes.

    A sandbox names its base image, but only images on this list are ever used: another
    team's sandbox image or a registry tag a member typed must not become a build's root.
    """

    base_images: tuple[str, ...] = (DEFAULT_BASE_IMAGE,)
    allow_pull: bool = False
    indexes: PipIndexes = field(default_factory=PipIndexes)
    # How much a sandbox's wheels may download and unpack to (a zip bomb fills the disk).
    wheel_limits: WheelLimits = field(default_factory=WheelLimits)

    @classmethod
    def from_env(cls) -> BuildPolicy:
        """Read the same environment variables as the web app's settings."""
        default = os.environ.get("JAZZMINE_BASE_IMAGE") or DEFAULT_BASE_IMAGE
        images = _env_list("JAZZMINE_BASE_IMAGES") or [default]
        pull = os.environ.get("JAZZMINE_BASE_IMAGE_PULL", "").strip().lower()
        return cls(
            base_images=tuple(images),
            allow_pull=pull in ("1", "true", "yes", "on"),
            indexes=PipIndexes(
                index_url=os.environ.get("JAZZMINE_PIP_INDEX_URL", "").strip(),
                extra_index_urls=tuple(_env_list("JAZZMINE_PIP_EXTRA_INDEX_URLS")),
            ),
            wheel_limits=WheelLimits.from_env(),
        )

    def check_base_image(self, base_image: str) -> None:
        """Refuse a base image the operator did not list."""
        if base_image not in self.base_images:
            raise BuildError(
                step="base image",
                message=(
                    f"base image {base_image!r} is not on the operator's list "
                    f"({', '.join(self.base_images)}); nothing was pulled or built"
                ),
            )


def _env_list(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


@dataclass(frozen=True)
class BuildResult:
    """The image a sandbox runs from, and whether this call had to build it."""

    tag: str
    built: bool
    seconds: float
    # The wheel files in the image ("name sha256", sorted); None: an image made before images
    # recorded them (its label is missing), so nobody can tell.
    wheels: tuple[str, ...] | None = ()
    # The id of the image those wheels were read from: what a caller that checks them starts
    # (the tag can be moved to another image the next moment). None: not read.
    image_id: str | None = None


def _result(
    tag: str, found: tuple[str, list[str] | None], *, built: bool, started: float
) -> BuildResult:
    image_id, wheels = found
    return BuildResult(
        tag=tag,
        built=built,
        seconds=time.monotonic() - started,
        wheels=None if wheels is None else tuple(wheels),
        image_id=image_id,
    )


def _default_cache_dir() -> Path:
    return Path(os.environ.get("JAZZMINE_CACHE_DIR") or Path.home() / ".cache" / "jazzmine")


# A sandbox known by name only: names are unique within the caller's registry, no further.
REPOSITORY_PREFIX = "jazzmine/sandbox-"
# A sandbox with an image key (the web passes its database id): names are unique per team
# only, so the repository is the key's and two teams' sandboxes of one name never share it.
# Its own path component: no name-only repository can ever be a keyed one.
KEYED_REPOSITORY_PREFIX = "jazzmine/sandbox/"
IMAGE_KEY_LABEL = "jazzmine.sandbox.key"
# On an image built FROM a sandbox image (a bash image), naming that image: the engine refuses
# to remove an image others were built on, so pruning a sandbox image removes these first.
DERIVED_FROM_LABEL = "jazzmine.derived-from"
# One path component of an image reference, as Docker reads it.
_IMAGE_KEY = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*$")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _repository(sandbox_name: str) -> str:
    """Return the image repository of a sandbox (Docker wants lowercase [a-z0-9._-])."""
    return REPOSITORY_PREFIX + re.sub(r"[^a-z0-9._-]", "-", sandbox_name.lower())


def image_key_check(key: str) -> str:
    """Return an image key that can name a repository; raise ValueError for any other."""
    if not isinstance(key, str) or len(key) > 64 or not _IMAGE_KEY.fullmatch(key):
        raise ValueError(
            f"image key {key!r} must be lowercase letters and digits, "
            "joined by single '.', '_' or '-' (at most 64 characters)"
        )
    return key


def image_tag_digest(tag: str) -> str:
    """Return the sandbox digest an image tag names (`SandboxBuilder.image_tag`), else "".

    "" for a tag made before tags carried the whole digest (16 hex chars then), or any other.
    """
    digest = tag.rpartition(":")[2].partition("-")[0]
    return digest if _SHA256.fullmatch(digest) else ""


def sandbox_image_tags(client: docker.DockerClient) -> frozenset[str]:
    """Return the tags of every sandbox image the engine holds, in one call.

    The low-level list: the high-level one inspects each image (~4 ms apiece).
    """
    prefixes = (REPOSITORY_PREFIX, KEYED_REPOSITORY_PREFIX)
    # Docker matches each pattern like a path: `*` stops at a slash.
    images = client.api.images(filters={"reference": [p + "*" for p in prefixes]})
    return frozenset(
        tag for image in images for tag in image.get("RepoTags") or () if tag.startswith(prefixes)
    )


def deployment_images_remove(client: docker.DockerClient, key_prefix: str) -> int:
    """Remove every sandbox image whose key starts with `key_prefix` (one deployment's images).

    For a deployment that is gone (a test session, a benchmark): its images are nobody's
    cache any more. Images made from another (a bash sandbox's, from its Python one) go first,
    since the engine keeps an image while one made from it exists; each by its tags (the last
    one's removal removes the image), never by force, so an image a container still uses
    stays. Returns how many images were removed.
    """
    if not key_prefix:
        raise ValueError("a deployment's key prefix is needed: '' names every deployment")
    images = client.api.images(filters={"label": IMAGE_KEY_LABEL})
    ours = [
        i for i in images if (i.get("Labels") or {}).get(IMAGE_KEY_LABEL, "").startswith(key_prefix)
    ]
    ours.sort(key=lambda image: DERIVED_FROM_LABEL not in (image.get("Labels") or {}))
    removed = 0
    for image in ours:
        try:
            # An untagged image lists no tag, or "<none>:<none>" on older engines.
            tags = [t for t in image.get("RepoTags") or () if t != "<none>:<none>"]
            for name in tags or [image["Id"]]:
                client.api.remove_image(name)
        except docker.errors.APIError:
            continue  # still used by a container, or another image was made from it
        removed += 1
    return removed


def _last_made(image: Any) -> str:
    """Return when an image was built or last tagged (an image reused as is keeps its date)."""
    attrs = image.attrs
    return max(
        str(attrs.get("Created") or ""), str((attrs.get("Metadata") or {}).get("LastTagTime") or "")
    )


class SandboxBuilder:
    """Build (or reuse) the image of each sandbox of a registry."""

    _locks: dict[str, threading.Lock] = {}
    _targets: dict[str, WheelTarget] = {}  # base image -> its interpreter (images are immutable)
    _locks_guard = threading.Lock()

    def __init__(
        self,
        registry: Any,
        *,
        client: docker.DockerClient | None = None,
        cache_dir: Path | None = None,
        bootstrap_base: bool = True,
        policy: BuildPolicy | None = None,
        image_keys: Mapping[str, str] | None = None,
    ) -> None:
        self.registry = registry
        # Sandbox name -> the key its images are filed under (see KEYED_REPOSITORY_PREFIX).
        self.image_keys = {name: image_key_check(key) for name, key in (image_keys or {}).items()}
        self._client = client
        self.cache_dir = cache_dir or _default_cache_dir()
        self.bootstrap_base = bootstrap_base
        self.policy = policy or BuildPolicy.from_env()

    @property
    def client(self) -> docker.DockerClient:
        """Return the Docker client, connecting on first use."""
        if self._client is None:
            self._client = engine_client()
        return self._client

    def repository(self, sandbox_name: str) -> str:
        """Return the image repository of a sandbox: its key's, else its name's."""
        key = self.image_keys.get(sandbox_name)
        return KEYED_REPOSITORY_PREFIX + key if key is not None else _repository(sandbox_name)

    def image_tag(self, sandbox_name: str) -> str:
        """Return the tag of a sandbox's image: its digest plus the runtime and base version.

        The whole digest: a run reuses whatever image has its tag, so a tag that two contents
        could share (a 16-hex checksum collides after some 2^32 tries) would let a member's
        image built for unaccepted code serve the runs of the code an admin accepted.
        """
        config = self.registry.get_sandbox(sandbox_name)
        digest = self.registry.sandbox_digest(sandbox_name)
        runtime = hashlib.sha256(f"{runtime_version()}|{config.base_image}".encode()).hexdigest()
        return f"{self.repository(sandbox_name)}:{digest}-{runtime[:8]}"

    def check_allowed(self, sandbox_name: str) -> None:
        """Refuse a sandbox whose base image the operator did not list (raises BuildError).

        Whether or not its image exists: an image made before the list changed is not used.
        """
        self.policy.check_base_image(self.registry.get_sandbox(sandbox_name).base_image)

    def image_exists(self, tag: str) -> bool:
        """Tell whether the engine already holds an image with this tag."""
        try:
            self.client.images.get(tag)
        except docker.errors.ImageNotFound:
            return False
        return True

    def ensure_image(
        self,
        sandbox_name: str,
        *,
        on_log: LogFn | None = None,
        interrupt: Interrupt | None = None,
    ) -> BuildResult:
        """Return the sandbox's image, building it first when its tag is missing.

        A fired `interrupt` stops the build at once (`WorkInterrupted`): a helper command
        is killed where it is, and so is the engine's step running now (its container); the
        rest stops at its next log line. No image is made.
        """
        stop = interrupt or Interrupt()

        def log(line: str) -> None:
            if on_log is not None:
                on_log(line)
            stop.check()  # after the line is told: the log shows how far the build got

        self.check_allowed(sandbox_name)  # before anything touches the engine
        tag = self.image_tag(sandbox_name)
        started = time.monotonic()
        with self._lock_for(tag):
            found = self.image_identity(tag)  # one ask: its id and its wheels go together
            if found is not None:
                log(f"image {tag} is up to date")
                return _result(tag, found, built=False, started=started)
            self._build(sandbox_name, tag, log, stop)
        # made: nothing left to stop
        self.prune(sandbox_name, keep=KEEP_IMAGES, log=on_log, current=tag)
        # Its wheels as the label of the image the tag names says, with that image's id: the
        # files of the build just made, unless another build moved the tag since.
        found = self.image_identity(tag)
        if found is None:
            raise BuildError(step="image", message=f"{tag} was removed as soon as it was built")
        return _result(tag, found, built=True, started=started)

    def image_identity(self, image: str) -> tuple[str, list[str] | None] | None:
        """Return the id of the image a tag (or id) names now and its wheel files, in one ask.

        None when there is no such image. The id is what a caller that checked the wheels
        starts from: the tag can be moved to another image the next moment.
        """
        try:
            attrs = self.client.api.inspect_image(image)
        except docker.errors.ImageNotFound:
            return None
        return str(attrs["Id"]), wheels_from_labels((attrs.get("Config") or {}).get("Labels"))

    def prune(
        self,
        sandbox_name: str,
        *,
        keep: int = KEEP_IMAGES,
        log: LogFn | None = None,
        current: str | None = None,
    ) -> int:
        """Remove all but the newest `keep` images of a sandbox; return how many went.

        Every change of code or dependencies builds a new image, so without this they pile up.
        Only this sandbox's own tags go: an image that also carries another repository's tag
        (the engine reused it as is) stays for that one, and so does every bash image built
        on that other name. `current`, the image the sandbox runs now, always stays, however
        old the engine says it is. The images built on an old one (its bash image) go with
        it. An image a container still uses is left alone (the engine refuses, and that is
        fine).
        """
        log = log or (lambda _line: None)
        repository = self.repository(sandbox_name)
        images = self.client.images.list(name=repository)
        images.sort(key=_last_made, reverse=True)
        images.sort(key=lambda image: current is not None and current in image.tags, reverse=True)
        old = [
            (image, [t for t in image.tags if t.startswith(repository + ":")])
            for image in images[keep:]
        ]
        # One listing of every derived image, not one per old image and tag.
        derived = self.client.images.list(filters={"label": DERIVED_FROM_LABEL}) if old else []
        removed = 0
        for image, own in old:
            built_on = [d for d in derived if d.labels.get(DERIVED_FROM_LABEL) in own]
            try:
                for each in built_on:
                    self.client.images.remove(each.id, noprune=False)
                    removed += 1
                    log(f"removed old image {', '.join(each.tags) or each.short_id}")
                # By tag, not by id: the last of its tags removes the image, and one another
                # repository still names is only untagged here.
                for tag in own:
                    self.client.images.remove(tag, noprune=False)
            except docker.errors.APIError:
                continue  # in use by a container, or already gone: so is what it was built on
            removed += 1
            log(f"removed old image {', '.join(own) or image.short_id}")
        return removed

    def stage(
        self,
        sandbox_name: str,
        dest: Path,
        *,
        on_log: LogFn | None = None,
        target: WheelTarget | None = None,
        interrupt: Interrupt | None = None,
    ) -> list[str]:
        """Write the runtime directory of a sandbox (harness, tools, unpacked wheels) to `dest`.

        Wheels are chosen for `target`, the interpreter that will load them (this host's,
        for bubblewrap, unless told otherwise), and refused past the policy's limits on what
        they download and unpack to. Return the wheel files unpacked ("name sha256",
        sorted): what a check of the directory's wheels reads.
        """
        log = on_log or (lambda _line: None)
        stage_runtime(dest, self.registry.tools(sandbox_name))
        requirements = self.registry.aggregate_dependencies(sandbox_name)
        if not requirements:
            return []
        limits = self.policy.wheel_limits
        wheel_dir = download_wheels(
            requirements, self.cache_dir, log, target=target, indexes=self.policy.indexes,
            interrupt=interrupt, limits=limits,
        )  # fmt: skip
        # Hashed before unpacking, from the very files unpacked: what the label says is them.
        lines = wheel_lines(wheel_dir)
        unpack_wheels(wheel_dir, dest / "site", log, target=target, limits=limits)
        for line in lines:  # one line a wheel: a person reads what the image holds
            log(f"wheel: {line}")
        return lines

    def wheel_target(self, base_image: str) -> WheelTarget:
        """Return what the base image's python3 is, asking the image itself once."""
        self.policy.check_base_image(base_image)
        cached = SandboxBuilder._targets.get(base_image)
        if cached is not None:
            return cached
        try:
            output = self.client.containers.run(
                base_image, ["python3", "-I", "-c", PROBE], remove=True, network_mode="none"
            )
            target = WheelTarget.parse(output.decode().strip())
        except (docker.errors.DockerException, ValueError) as exc:
            raise BuildError(
                step="inspect base image",
                message=f"cannot tell which python3 {base_image} runs: {exc}",
            ) from exc
        SandboxBuilder._targets[base_image] = target
        return target

    def _lock_for(self, tag: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(tag, threading.Lock())

    def _ensure_base(self, base_image: str, log: LogFn, interrupt: Interrupt) -> None:
        """Make sure a listed base image exists: bootstrap it offline, pull only when allowed."""
        self.policy.check_base_image(base_image)
        if self.image_exists(base_image):
            return
        if not self.bootstrap_base:
            raise BuildError(
                step="base image",
                message=f"{base_image} is missing; run scripts/ensure-base-image.sh {base_image}",
            )
        log(f"base image {base_image} is missing: bootstrapping it (about a minute, once)")
        # The script pulls before bootstrapping; only the operator's setting lets it.
        env = {**os.environ, "JAZZMINE_BASE_IMAGE_PULL": "1" if self.policy.allow_pull else "0"}
        tail: list[str] = []

        def on_line(line: str) -> None:
            tail[:] = [*tail[-14:], line]
            log(line)

        command = ["bash", str(ENSURE_BASE_SCRIPT), base_image]
        if run_logged(command, on_line, interrupt=interrupt, env=env) != 0:
            raise BuildError(step="base image", message=f"could not make {base_image}",
                             log_tail=tail)  # fmt: skip

    def _build(self, sandbox_name: str, tag: str, log: LogFn, interrupt: Interrupt) -> None:
        config = self.registry.get_sandbox(sandbox_name)
        log(f"building {tag} for sandbox {sandbox_name!r}")
        self._ensure_base(config.base_image, log, interrupt)
        with workdir_held("jazzmine-build-") as context:
            target = None
            if self.registry.aggregate_dependencies(sandbox_name):
                target = self.wheel_target(config.base_image)
                log(f"dependencies: wheels for {target.key} (read from {config.base_image})")
            wheels = self.stage(
                sandbox_name, context / "runtime", on_log=log, target=target, interrupt=interrupt
            )
            log(f"wheels: {len(wheels)} file(s), digest {wheels_digest(wheels)}")
            (context / "Dockerfile").write_text(self._dockerfile(config.base_image))
            self._docker_build(context, tag, sandbox_name, log, interrupt, wheels=wheels)

    def _dockerfile(self, base_image: str) -> str:
        return (
            f"FROM {base_image}\n"
            f"COPY runtime {RUNTIME_DIR}\n"
            f"RUN {_HARDEN}\n"
            "ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HOME=/tmp LANG=C.UTF-8\n"
            "WORKDIR /tmp\n"
            f"USER {SANDBOX_USER}\n"
            f'CMD ["python3", "-I", "{RUNTIME_DIR}/harness.py", "{RUNTIME_DIR}"]\n'
        )

    def _docker_build(
        self,
        context: Path,
        tag: str,
        sandbox_name: str,
        log: LogFn,
        interrupt: Interrupt,
        *,
        wheels: list[str] | None = None,
    ) -> None:
        """Build the image of a staged context, streaming the engine's log.

        A fired `interrupt` kills the step running now (the engine names its container in the
        log: "Running in <id>"), so a silent step (compiling a large dependency) stops at
        once instead of at its next line; the engine then ends the build and removes it.
        """
        step = "prepare"
        tail: list[str] = []
        running: list[str] = []  # the container of the step the engine runs now, if any
        labels = {"jazzmine.sandbox": sandbox_name, "jazzmine.runtime": runtime_version()}
        wheels = sorted(wheels or [])
        labels[WHEELS_LABEL] = wheels_digest(wheels)
        labels[WHEELS_LIST_LABEL] = "\n".join(wheels)
        if sandbox_name in self.image_keys:
            labels[IMAGE_KEY_LABEL] = self.image_keys[sandbox_name]

        def stop_step(_reason: str) -> None:
            if running:
                with contextlib.suppress(docker.errors.DockerException):
                    self.client.containers.get(running[-1]).kill()

        try:
            stream = self.client.api.build(
                path=str(context), tag=tag, rm=True, forcerm=True, decode=True,
                labels=labels, network_mode="none",
            )  # fmt: skip
            with interrupt.during(stop_step):
                for chunk in stream:
                    if "error" in chunk:
                        interrupt.check()  # the step failed because it was stopped: say so
                        raise BuildError(step=step, message=str(chunk["error"]).strip(),
                                         log_tail=tail)  # fmt: skip
                    text = str(chunk.get("stream") or chunk.get("status") or "").rstrip()
                    for line in filter(None, text.splitlines()):
                        if line.startswith("Step "):
                            step = line
                        elif line.lstrip(" ->").startswith("Running in "):
                            running.append(line.split()[-1])
                            if interrupt.reason is not None:
                                stop_step(interrupt.reason)  # fired before the engine named it
                        tail = [*tail[-14:], line]
                        log(line)
        except docker.errors.DockerException as exc:
            raise BuildError(
                step=step, message=f"Docker engine error: {exc}", log_tail=tail
            ) from exc
        if not self.image_exists(tag):
            raise BuildError(step=step, message="the engine reported no image", log_tail=tail)
        log(f"built {tag}")
