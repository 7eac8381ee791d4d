"""Run bash orchestration inside the sandbox: build the bash image, drive one run, read its trace.

The bash interpreter and every tool callback run in the container, never in the web process.
The bash image is the sandbox's own image (tools, harness, limits) plus bashkit and the bash
runner, built once per sandbox image and reused by tag.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import platform
import shutil
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import docker
import docker.errors

from jazzmine.sandbox.builder import DERIVED_FROM_LABEL
from jazzmine.sandbox.containers import run_one_shot
from jazzmine.sandbox.engine import engine_client
from jazzmine.sandbox.errors import BuildError
from jazzmine.sandbox.request import RunLimits
from jazzmine.sandbox.workdirs import workdir_held

from .engine import (
    CALL_EVENT_BYTES,
    OUTPUT_CAP_BYTES,
    BashCall,
    BashLimits,
    BashResult,
    ToolSpec,
)

BASH_DIR = "/opt/jazzmine-bash"
BASH_REPOSITORY = "jazzmine/bash"
_HERE = Path(__file__).resolve().parent
RUNNER_FILE = _HERE / "runner.py"
ENGINE_FILE = _HERE / "engine.py"
BLINDSPOTS_FILE = _HERE / "blindspots.py"
# What the bash image holds beside bashkit, under the names the runner imports them by.
BASH_FILES = {
    "runner.py": RUNNER_FILE,
    "bash_engine.py": ENGINE_FILE,
    "bash_blindspots.py": BLINDSPOTS_FILE,
}
# The bashkit interpreter checks its own timeout between commands only; the container's
# wall clock (this much later) kills a run stuck inside one builtin.
KILL_GRACE_SECONDS = 5.0
TIMEOUT_EXIT = 124
_build_lock = threading.Lock()


def bash_output_limits(limits: RunLimits, bash_limits: BashLimits) -> RunLimits:
    """Return the limits of a bash run's container, its output cap sized for its protocol.

    A sandbox's `max_output_bytes` is what its script may print; a bash run's stream also
    carries an event per tool call (each cut to `CALL_EVENT_BYTES`), up to `max_commands`, and
    a result holding stdout and stderr (bashkit cuts each at `OUTPUT_CAP_BYTES`; as JSON a
    byte may take six). A run within every limit it was given was killed as "output limit"
    before, its result lost.
    """
    protocol = 12 * OUTPUT_CAP_BYTES + bash_limits.max_commands * CALL_EVENT_BYTES
    return dataclasses.replace(limits, max_output_bytes=limits.max_output_bytes + protocol)


def output_held(result: BashResult, max_bytes: int) -> BashResult:
    """Hold what a bash script printed to the sandbox's output limit, as a Python run's is.

    The container's cap is sized for the protocol around the output (`bash_output_limits`),
    so it never held the script itself to the sandbox's number: 50 KB printed under a limit
    of 10,000 bytes was stored whole, the run a success. Past it, stdout and then stderr are
    cut (at a character's boundary) and the run ends as an output limit.
    """
    out, err = result.stdout.encode(), result.stderr.encode()
    printed = len(out) + len(err)
    if printed <= max_bytes:
        return result
    kept_out = out[:max_bytes]
    kept_err = err[: max_bytes - len(kept_out)]
    message = f"output limit of {max_bytes} bytes reached (the script wrote {printed:,} bytes)"
    return dataclasses.replace(
        result,
        stdout=kept_out.decode("utf-8", "ignore"),
        stderr=kept_err.decode("utf-8", "ignore"),
        stdout_truncated=result.stdout_truncated or len(kept_out) < len(out),
        stderr_truncated=result.stderr_truncated or len(kept_err) < len(err),
        exit_code=result.exit_code or 1,
        error=result.error or message,
    )


def _bashkit_files() -> tuple[str, list[tuple[Path, Path]]]:
    """Return bashkit's version and its installed files (source path, path under site/)."""
    dist = importlib.metadata.distribution("bashkit")
    files = []
    for entry in dist.files or []:
        if entry.parts[0] != "bashkit" or "__pycache__" in entry.parts:
            continue
        files.append((Path(str(entry.locate())), Path(*entry.parts)))
    if not files:
        raise BuildError(step="bash image", message="bashkit is installed without its files")
    return dist.version, files


def bash_image_tag(sandbox_image: str, image_id: str) -> str:
    """Return the tag of the bash image for a sandbox image (changes with any of its inputs).

    `image_id` is the id of the image `sandbox_image` names: the one the bash image is built on.
    """
    version, _ = _bashkit_files()
    digest = hashlib.sha256()
    # The label names the sandbox image, so that pruning it removes this one (images made
    # before they were labelled get a new tag, hence a labelled image).
    label = f"{DERIVED_FROM_LABEL}={sandbox_image}"
    sources = [path.read_text() for path in BASH_FILES.values()]
    for part in (image_id, version, *sources, label):
        digest.update(part.encode())
        digest.update(b"\x00")
    return f"{BASH_REPOSITORY}:{digest.hexdigest()[:16]}"


def ensure_bash_image(
    sandbox_image: str,
    *,
    client: docker.DockerClient | None = None,
    image_id: str | None = None,
) -> str:
    """Return the bash image of a sandbox image, building it first when it is missing.

    Built on the image `sandbox_image` names now, by its id, or on `image_id` when the caller
    already read one (say, its wheels): a tag can be moved to another image in between.
    """
    api = client or engine_client()
    try:
        image_id = image_id or api.images.get(sandbox_image).id
    except docker.errors.ImageNotFound:
        raise BuildError(
            step="bash image", message=f"sandbox image {sandbox_image} is not built"
        ) from None
    tag = bash_image_tag(sandbox_image, image_id)
    with _build_lock:
        try:
            api.images.get(tag)
            return tag
        except docker.errors.ImageNotFound:
            pass
        engine_arch = str(api.info().get("Architecture", ""))
        if engine_arch and engine_arch != platform.machine():
            raise BuildError(
                step="bash image",
                message=f"bashkit here is built for {platform.machine()}, the engine runs {engine_arch}",
            )
        _build(api, sandbox_image, image_id, tag)
        legacy_bash_images_remove(api)
    return tag


def legacy_bash_images_remove(api: docker.DockerClient) -> int:
    """Remove bash images made before they were labelled with their sandbox image; say how many.

    Pruning a sandbox image takes the bash images labelled as built on it; these name none,
    so nothing else ever removes them. Their tags are from an older runner, never used
    again. One a container still uses is left (the engine refuses, and that is fine).
    """
    removed = 0
    for image in api.images.list(name=BASH_REPOSITORY):
        if DERIVED_FROM_LABEL in (image.labels or {}):
            continue
        for tag in image.tags:
            if not tag.startswith(BASH_REPOSITORY + ":"):
                continue  # never another name the same image carries
            try:
                api.images.remove(tag, noprune=False)
            except docker.errors.APIError:
                continue
            removed += 1
    return removed


def _build(api: docker.DockerClient, sandbox_image: str, image_id: str, tag: str) -> None:
    # FROM the id, labelled with the name: the name is what a prune of it looks for.
    with workdir_held("jazzmine-bash-") as context:
        try:
            target = context / "bash"
            (target / "site").mkdir(parents=True)
            for name, source in BASH_FILES.items():
                shutil.copyfile(source, target / name)
            _, files = _bashkit_files()
            # The installed files are the unpacked manylinux wheel: the image's python3 is 3.11
            # on glibc 2.36, which the abi3 / manylinux2014 build supports.
            for source, relative in files:
                destination = target / "site" / relative
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, destination)
            for path in [target, *target.rglob("*")]:
                path.chmod(0o755 if path.is_dir() else 0o644)
            (context / "Dockerfile").write_text(
                f"FROM {image_id}\n"
                f"COPY bash {BASH_DIR}\n"
                f'CMD ["python3", "-I", "{BASH_DIR}/runner.py"]\n'
            )
            tail: list[str] = []
            for chunk in api.api.build(path=str(context), tag=tag, rm=True, forcerm=True,
                                       decode=True, network_mode="none",
                                       labels={DERIVED_FROM_LABEL: sandbox_image}):  # fmt: skip
                if "error" in chunk:
                    raise BuildError(
                        step="bash image", message=str(chunk["error"]).strip(), log_tail=tail
                    )
                text = str(chunk.get("stream") or "").strip()
                if text:
                    tail = [*tail[-14:], text]
        except docker.errors.DockerException as exc:
            raise BuildError(step="bash image", message=f"Docker engine error: {exc}") from exc


async def run_bash_in_sandbox(
    script: str,
    *,
    sandbox_image: str,
    specs: list[ToolSpec],
    limits: RunLimits | None = None,
    bash_limits: BashLimits | None = None,
    secrets: dict[str, str] | None = None,
    on_call: Callable[[BashCall], None] | None = None,
    client: docker.DockerClient | None = None,
    allowed_tools: frozenset[str] | None = None,
    tool_secrets: Mapping[str, Iterable[str]] | None = None,
    sandbox_image_id: str | None = None,
) -> BashResult:
    """Run a bash script in a hardened container of the sandbox; tools run in there too.

    `tool_secrets` names, for each tool, the secrets that are its alone: set only while it
    runs, as in the harness (every other secret is every tool's). `sandbox_image_id` pins the
    image `sandbox_image` named when the caller read it: the run is built on that one.
    """
    bash_limits = bash_limits or BashLimits()
    api = client or engine_client()
    try:
        image = ensure_bash_image(sandbox_image, client=api, image_id=sandbox_image_id)
    except BuildError as exc:
        return BashResult(stdout="", stderr=str(exc), exit_code=1, error=str(exc))
    request = {
        "script": script,
        "tools": [s.to_dict() for s in specs],
        "limits": {
            "max_commands": bash_limits.max_commands,
            "max_loop_iterations": bash_limits.max_loop_iterations,
            "timeout_seconds": bash_limits.timeout_seconds,
        },
        "secrets": dict(secrets or {}),
        "tool_secrets": {tool: sorted(names) for tool, names in (tool_secrets or {}).items()},
        # Enforced by the in-container runner: a refused builtin exits non-zero, saying why.
        "allowed_tools": None if allowed_tools is None else sorted(allowed_tools),
    }
    calls: list[BashCall] = []
    final: dict[str, object] = {}

    def on_line(line: str) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        if message.get("type") == "call":
            call = BashCall(**message["data"])
            calls.append(call)
            if on_call is not None:
                on_call(call)
        elif message.get("type") in ("result", "error"):
            final.update(message)

    outcome = await run_one_shot(
        image,
        ["python3", "-I", f"{BASH_DIR}/runner.py"],
        stdin=(json.dumps(request) + "\n").encode(),
        limits=bash_output_limits(limits or RunLimits(), bash_limits),
        timeout_seconds=bash_limits.timeout_seconds + KILL_GRACE_SECONDS,
        labels={"jazzmine.bash": "1"},
        on_stdout_line=on_line,
        client=api,
    )
    if final.get("type") == "result":
        result = BashResult.from_dict(final["data"])  # type: ignore[arg-type]
        result = output_held(result, (limits or RunLimits()).max_output_bytes)
        return dataclasses.replace(result, calls=calls)  # each came as its own event
    if outcome.error is not None:
        message = outcome.error
    elif outcome.timed_out:
        message = f"timed out after {bash_limits.timeout_seconds:g} s: the sandbox was killed"
    elif final.get("type") == "error":
        message = str(final["data"].get("message"))  # type: ignore[union-attr]
    else:
        notes = "; ".join(outcome.notes) or outcome.stderr.strip()[-2000:]
        message = (
            f"the bash sandbox ended without a result (exit code {outcome.exit_code}): {notes}"
        )
    code = TIMEOUT_EXIT if outcome.timed_out else 1
    # Cut at the container's output cap, the run's output is lost: an output limit too.
    return BashResult(stdout="", stderr=message + "\n", exit_code=code, error=message,
                      calls=calls, duration_ms=outcome.duration_ms,
                      stdout_truncated=outcome.output_limited)  # fmt: skip
