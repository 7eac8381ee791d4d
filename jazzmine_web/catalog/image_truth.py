"""What the sandbox page says about the current image: the build rows, checked against the engine.

Runs and trials build a missing image themselves (`ensure_image`) without a build row, so the
rows alone say "never built" while the engine holds the image. Where the rows cannot say (no
build of the current code, or a failed one) the engine is asked; an engine that does not
answer leaves the rows' word, and the page says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import docker

from . import selectors
from .models import ImageBuild, Sandbox, Tool
from .selectors import ImageStatus
from .services.images import ENGINE_TIMEOUT_SECONDS, sandbox_builder
from .services.registry import registry_for_sandbox


@dataclass(frozen=True)
class EngineImages:
    """What the engine holds for a sandbox: the current code's image, and any older ones."""

    current_tag: str
    has_current: bool
    older: int


@dataclass(frozen=True)
class ImageTruth:
    """The current image as the page tells it: state, words, detail and the build it is about."""

    UP_TO_DATE = "up_to_date"
    BUILDING = "building"
    FAILED = "failed"
    NEEDS_REBUILD = "needs_rebuild"
    NEVER_BUILT = "never_built"

    state: str
    detail: str
    build: ImageBuild | None

    @property
    def code(self) -> str:
        """Return the badge's colour state (never built reads as needs rebuild)."""
        return self.NEEDS_REBUILD if self.state == self.NEVER_BUILT else self.state

    @property
    def label(self) -> str:
        """Return the state as people read it."""
        return self.state.replace("_", " ")

    @property
    def is_building(self) -> bool:
        """Tell whether a build is under way (the Build button waits for it)."""
        return self.state == self.BUILDING


def engine_images(sandbox: Sandbox, *, client: Any = None) -> EngineImages | None:
    """Ask the engine for the sandbox's images; None when it cannot be asked."""
    own_client = client is None
    try:
        if own_client:
            client = docker.from_env(timeout=ENGINE_TIMEOUT_SECONDS)
        builder = sandbox_builder(sandbox, client=client)
        tag = builder.image_tag(sandbox.name)
        repository = builder.repository(sandbox.name)
        # One image can carry other repositories' tags too (an image reused as is).
        tags = {
            t
            for image in client.images.list(name=repository)
            for t in image.tags
            if t.startswith(repository + ":")
        }
    except Exception:  # no engine, no socket, a timeout: the rows still say something
        return None
    finally:
        if own_client and client is not None:
            client.close()
    return EngineImages(current_tag=tag, has_current=tag in tags, older=len(tags - {tag}))


def image_truth(sandbox: Sandbox, status: ImageStatus) -> ImageTruth:
    """Return what to say about the current image, asking the engine when the rows cannot."""
    build = status.build
    if status.code == ImageStatus.BUILDING:
        return ImageTruth(ImageTruth.BUILDING, f"build #{build.pk} is running", build)
    if status.code == ImageStatus.UP_TO_DATE:
        # A build of this very code succeeded: its row is the record, with its log.
        return ImageTruth(ImageTruth.UP_TO_DATE, f"built by build #{build.pk}", build)
    found = engine_images(sandbox)
    if found is not None and found.has_current:
        detail = (
            f"the engine holds the image of the current code, {found.current_tag}: a run or "
            "a trial built it, so there is no build log"
        )
        if status.code == ImageStatus.FAILED:
            detail += f"; build #{build.pk} failed before"
        return ImageTruth(ImageTruth.UP_TO_DATE, detail, build)
    unasked = "" if found is not None else " (the engine did not answer: from the build records)"
    if status.code == ImageStatus.FAILED:
        return ImageTruth(ImageTruth.FAILED, f"build #{build.pk} failed{unasked}", build)
    if found is not None and found.older:
        detail = f"the engine holds {found.older} image(s) of earlier code, none of the current"
        return ImageTruth(ImageTruth.NEEDS_REBUILD, detail, build)
    if build is not None:
        detail = f"the code changed since build #{build.pk}{unasked}"
        return ImageTruth(ImageTruth.NEEDS_REBUILD, detail, build)
    return ImageTruth(ImageTruth.NEVER_BUILT, f"no image of this sandbox yet{unasked}", None)


def tool_image_sandboxes(tool: Tool) -> list[Sandbox]:
    """Return the team's sandboxes whose current image holds this tool's code as it is now.

    From the build rows first; a sandbox whose rows cannot say, but whose current code holds
    the tool's, asks the engine, as its page does (a run or a trial built the image without
    a row, and the tool page said no image held the code while the sandbox page said the
    image was up to date).
    """
    found = selectors.tool_image_sandboxes(tool)
    holding = Tool.objects.filter(
        sandbox__team_id=tool.sandbox.team_id, checksum=tool.checksum
    ).values_list("sandbox_id", flat=True)
    for sandbox in Sandbox.objects.filter(pk__in=set(holding)).exclude(
        pk__in=[s.pk for s in found]
    ):
        registry = registry_for_sandbox(sandbox)
        if not any(t.checksum == tool.checksum for t in registry.tools(sandbox.name)):
            continue  # not in its image (a script tool not published yet)
        status = selectors.sandbox_image_status(sandbox, registry=registry)
        if image_truth(sandbox, status).state == ImageTruth.UP_TO_DATE:
            found.append(sandbox)
    return sorted(found, key=lambda s: s.name)
