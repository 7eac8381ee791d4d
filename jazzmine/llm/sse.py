"""Read server-sent events: the data of each event of a streamed answer, within a size bound."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx

from .bodies import MAX_ANSWER_BYTES, lines_within


async def sse_data(
    response: httpx.Response, *, url: str, limit: int = MAX_ANSWER_BYTES
) -> AsyncIterator[str]:
    """Yield the data of each server-sent event (multi-line data joined, comments skipped).

    The whole stream may hold at most `limit` bytes (LLMProtocolError past it).
    """
    lines: list[str] = []
    async for line in lines_within(response, url=url, limit=limit):
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
