"""HTTP/1.1 on asyncio streams: read one request, write JSON, OpenAI-style errors and chunks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

_MAX_BODY = 16 * 1024 * 1024


async def read_request(
    reader: asyncio.StreamReader,
) -> tuple[str, str, dict[str, str], bytes] | None:
    """Read one HTTP/1.1 request: method, path, lower-cased headers, body."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _version = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    length = min(int(headers.get("content-length", "0") or 0), _MAX_BODY)
    body = await reader.readexactly(length) if length else b""
    return method, path, headers, body


async def write_chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    """Write one chunk of a chunked body (empty data ends the body) and flush it."""
    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    await writer.drain()


async def send_json(
    writer: asyncio.StreamWriter, status: int, data: Any, *, extra: Mapping[str, str] | None = None
) -> None:
    """Send a complete JSON response and flush it."""
    payload = json.dumps(data).encode()
    head = [
        f"HTTP/1.1 {status} {status_phrase(status)}",
        "Content-Type: application/json",
        f"Content-Length: {len(payload)}",
        "Connection: close",
        *(f"{k}: {v}" for k, v in (extra or {}).items()),
    ]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
    await writer.drain()


async def send_error(
    writer: asyncio.StreamWriter,
    status: int,
    message: str,
    type_: str,
    code: str | None = None,
    *,
    extra: Mapping[str, str] | None = None,
) -> None:
    """Send an OpenAI-style error body."""
    error = {"error": {"message": message, "type": type_, "code": code}}
    await send_json(writer, status, error, extra=extra)


def status_phrase(status: int) -> str:
    """Return the reason phrase of a status line ("Unknown" for a code HTTP does not name)."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"
