"""The image builder of one sandbox: its images filed under its id, inside the operator's walls.

Sandbox names are unique per team only: two teams' `ecommerce` sandboxes filed by name would
share one image repository, and each one's builds would prune the other's current image. So
every builder the web makes comes from here and files a sandbox's images under its database
id (after the deployment's name), which no other sandbox ever has and a rename keeps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import docker
from django.conf import settings

from jazzmine.core.tools import ToolRegistry
from jazzmine.sandbox.builder import BuildPolicy, SandboxBuilder
from jazzmine.sandbox.wheel_limits import WheelLimits
from jazzmine.sandbox.wheels import PipIndexes

from ..models import Sandbox
from .registry import registry_for_sandbox
from .rules import base_images_allowed


def build_policy() -> BuildPolicy:
    """Return the builder's walls from the deployment settings (base images, pulls, indexes,
    what wheels may unpack to)."""
    return BuildPolicy(
        base_images=tuple(base_images_allowed()),
        allow_pull=bool(settings.JAZZMINE_BASE_IMAGE_PULL),
        indexes=PipIndexes(
            index_url=settings.JAZZMINE_PIP_INDEX_URL,
            extra_index_urls=tuple(settings.JAZZMINE_PIP_EXTRA_INDEX_URLS),
        ),
        wheel_limits=WheelLimits(
            wheel_bytes=settings.JAZZMINE_MAX_WHEEL_BYTES,
            wheel_entries=settings.JAZZMINE_MAX_WHEEL_ENTRIES,
            sandbox_bytes=settings.JAZZMINE_MAX_SANDBOX_WHEELS_BYTES,
            sandbox_entries=settings.JAZZMINE_MAX_SANDBOX_WHEELS_ENTRIES,
        ),
    )


def sandbox_image_key(sandbox: Sandbox) -> str:
    """Return the key a sandbox's images are filed under (`jazzmine/sandbox/<key>`).

    Its id, after the deployment's name: another deployment on the same Docker engine has a
    sandbox of the same id, and must never prune this one's images.
    """
    return f"{settings.JAZZMINE_DEPLOYMENT}-{sandbox.pk}"


def sandbox_builder(
    sandbox: Sandbox,
    *,
    registry: ToolRegistry | None = None,
    client: Any = None,
    policy: BuildPolicy | None = None,
) -> SandboxBuilder:
    """Return the builder of a sandbox's images: its own repository, the deployment's walls.

    Pass `registry` to reuse one built already (a trial's, with unpublished tools in it).
    """
    return SandboxBuilder(
        registry if registry is not None else registry_for_sandbox(sandbox),
        client=client,
        policy=policy or build_policy(),
        image_keys={sandbox.name: sandbox_image_key(sandbox)},
    )


# A page waits at most this long for the engine before it falls back to the build rows.
ENGINE_TIMEOUT_SECONDS = 2


@dataclass(frozen=True)
class ImageWheels:
    """What the engine holds under a sandbox's current tag: whether an image, and its wheels.

    `wheels` is the list its label gives (None: no image, or a label that does not say).
    """

    exists: bool
    wheels: list[str] | None


def sandbox_image_wheels(sandbox: Sandbox, *, client: Any = None) -> ImageWheels | None:
    """Read the wheel files of the image a run of the sandbox would start now; None: no answer.

    The worker reads them the same way (`SandboxBuilder.image_identity` of the current tag,
    runs.executor) before any secret goes in: a page that told the admin anything else (a
    build row, say) offered files the worker never compares, and missed an image a run or a
    trial made with no build row at all.
    """
    own_client = client is None
    try:
        if own_client:
            client = docker.from_env(timeout=ENGINE_TIMEOUT_SECONDS)
        builder = sandbox_builder(sandbox, client=client)
        found = builder.image_identity(builder.image_tag(sandbox.name))
    except Exception:  # no engine, no socket, a timeout: the caller falls back to the rows
        return None
    finally:
        if own_client and client is not None:
            client.close()
    if found is None:
        return ImageWheels(exists=False, wheels=None)
    return ImageWheels(exists=True, wheels=found[1])
