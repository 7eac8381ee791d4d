"""Channel groups of the catalog's live pages."""

from __future__ import annotations

from ..studio.live import group_send, remember_loop

__all__ = ["build_group", "group_send", "remember_loop"]


def build_group(build_id: int) -> str:
    """Return the channel group of one image build."""
    return f"build-{build_id}"
