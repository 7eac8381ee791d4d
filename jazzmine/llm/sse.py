"""Read server-sent events: the data of each event of a streamed answer."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx


async def sse_data(response: httpx.Response) -> AsyncIterator[str]:
    """Yield the data of each server-sent event (multi-line data joined, comments skipped)."""
    lines: list[str] = []
    async for line in response.aiter_lines():
        if not line:
            if lines:
                yield "\n".join(lines)
                lines = []
            continue
        if line.startswith(":"):
            continue  # keep-alive comment
        name, _, value = line.partition(":")
        if name == "data":
            lines.append(value[1:] if value.startswith(" ") else value)
    if lines:
        yield "\n".join(lines)
