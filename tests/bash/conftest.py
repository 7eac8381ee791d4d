"""Fixtures of the bash suite: the engine fixtures of the script-tool suite."""

from __future__ import annotations

from ..scripttools.conftest import base_image, docker_client

__all__ = ["base_image", "docker_client"]
