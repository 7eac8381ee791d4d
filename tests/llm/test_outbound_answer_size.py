"""An endpoint that answers without end fails the call; it cannot fill this process's memory.

Each answer here is 64 MiB (or unpacks to it), four times the bound: the client must stop
reading near the bound, so the server never gets to send it all.
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator

import pytest

from jazzmine.llm import (
    LLMConfig,
    LLMProtocolError,
    LLMServerError,
    complete,
    list_models,
    stream_chat,
)
from jazzmine.llm.bodies import MAX_ANSWER_BYTES

from .conftest import loopback_config

HI = [{"role": "user", "content": "Say hello"}]
TOTAL = 4 * MAX_ANSWER_BYTES
MIB = b"a" * (1 << 20)


class Flood:
    """A loopback endpoint answering one request with `head` and then `body`, counting what
    it managed to send before the client hung up."""

    def __init__(self, head: bytes, body: Iterator[bytes]) -> None:
        self.head = head
        self.body = body
        self.sent = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            conn.recv(65536)
            try:
                conn.sendall(self.head)
                for chunk in self.body:
                    conn.sendall(chunk)
                    self.sent += len(chunk)
            except OSError:
                pass

    def close(self) -> None:
        self.sock.close()
        self.thread.join(timeout=10)

    def config(self) -> LLMConfig:
        return loopback_config(f"http://127.0.0.1:{self.port}/v1", model="m", timeout=10)


def head(status: str = "200 OK", **headers: str) -> bytes:
    lines = [f"HTTP/1.1 {status}", "connection: close"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def mebibytes(count: int, chunk: bytes = MIB) -> Iterator[bytes]:
    for _ in range(count * len(MIB) // len(chunk)):
        yield chunk


def events() -> Iterator[bytes]:
    """Well-formed text deltas, 64 KiB of text each, without end."""
    delta = {"choices": [{"index": 0, "delta": {"content": "a" * 65536}}]}
    event = b"data: " + json.dumps(delta).encode() + b"\n\n"
    for _ in range(TOTAL // len(event)):
        yield event


def gzip_bomb() -> Iterator[bytes]:
    """A few dozen KiB that unpack to 64 MiB of JSON text."""
    packed = gzip.compress(b'{"choices": "' + b"a" * TOTAL + b'"}', compresslevel=9)
    for start in range(0, len(packed), 65536):
        yield packed[start : start + 65536]


async def stream(flood: Flood) -> None:
    async for _ in stream_chat(flood.config(), HI):
        pass


async def whole(flood: Flood) -> None:
    await complete(flood.config(), HI)


async def models(flood: Flood) -> None:
    await list_models(flood.config())


CASES = {
    "one endless event line": (head(content_type="text/event-stream"), "data: ", stream),
    "endless text deltas": (head(content_type="text/event-stream"), events, stream),
    "an endless JSON answer to a stream": (head(content_type="application/json"), "", stream),
    "an endless JSON answer": (head(content_type="application/json"), "", whole),
    "an endless model list": (head(content_type="application/json"), "", models),
    "a gzip bomb": (
        head(content_type="application/json", content_encoding="gzip"),
        gzip_bomb,
        whole,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
async def test_an_answer_past_the_bound_fails_and_is_not_read_further(name: str) -> None:
    first, body, call = CASES[name]
    if isinstance(body, str):
        chunks = iter([body.encode(), *mebibytes(TOTAL >> 20)])
    else:
        chunks = body()
    flood = Flood(first, chunks)
    try:
        with pytest.raises(LLMProtocolError, match="larger than 16,384 KiB"):
            await call(flood)
    finally:
        flood.close()
    if name != "a gzip bomb":  # it is small on the wire: bounded by what it unpacks to
        assert flood.sent < TOTAL // 2


@pytest.mark.parametrize("call", [stream, whole])
async def test_an_endless_error_answer_is_read_only_for_its_code(
    call: Callable[[Flood], Awaitable[None]],
) -> None:
    flood = Flood(head("500 Oops", content_type="application/json"), mebibytes(TOTAL >> 20))
    try:
        with pytest.raises(LLMServerError, match="answered 500"):
            await call(flood)
    finally:
        flood.close()
    assert flood.sent < TOTAL // 2
