"""A compressed answer is unpacked a little at a time: a few bytes on the wire never fill memory.

httpx unpacks each piece it reads whole, and stacks codings (`gzip, gzip`) as sent: a 2 KiB
answer packed twice unpacks to a gibibyte in one call, before any size check sees it. The
playground reads its LLM in the web process, so one user's endpoint could take the server down.
"""

from __future__ import annotations

import gzip
import json
import tracemalloc
import zlib
from collections.abc import Awaitable, Callable

import pytest

from jazzmine.llm import LLMConfig, LLMProtocolError, complete, stream_chat
from jazzmine.llm.bodies import MAX_ANSWER_BYTES

from .conftest import loopback_config
from .listener import Listener, http_answer

HI = [{"role": "user", "content": "Say hello"}]
UNPACKED = 16 * MAX_ANSWER_BYTES  # 256 MiB


def zeros_packed(size: int) -> bytes:
    """Return gzip of `size` zero bytes, made a MiB at a time."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    return b"".join([*(packer.compress(block) for _ in range(size >> 20)), packer.flush()])


class Answer(Listener):
    """A loopback endpoint answering with `body` and `headers` (`content_type="x"`)."""

    def __init__(self, body: bytes, **headers: str) -> None:
        super().__init__(http_answer("200 OK", body, **headers))

    def config(self) -> LLMConfig:
        return loopback_config(f"http://127.0.0.1:{self.port}/v1", model="m", timeout=10)


async def whole(answer: Answer) -> object:
    return await complete(answer.config(), HI)


async def streamed(answer: Answer) -> object:
    return [chunk async for chunk in stream_chat(answer.config(), HI)]


async def peak_while(call: Callable[[Answer], Awaitable[object]], answer: Answer) -> int:
    """Return the most memory Python held during the call (it must raise LLMProtocolError)."""
    tracemalloc.start()
    try:
        with pytest.raises(LLMProtocolError) as caught:
            await call(answer)
        return tracemalloc.get_traced_memory()[1], str(caught.value)
    finally:
        tracemalloc.stop()
        answer.close()


CALLS = {"whole": whole, "streamed": streamed}


@pytest.mark.parametrize("kind", sorted(CALLS))
async def test_an_answer_packed_twice_is_refused_without_unpacking_it(kind: str) -> None:
    body = gzip.compress(zeros_packed(UNPACKED), 9)
    assert len(body) < 64 * 1024  # one read: httpx unpacks it in one call
    answer = Answer(body, content_type="application/json", content_encoding="gzip, gzip")
    peak, message = await peak_while(CALLS[kind], answer)
    assert peak < 2 * MAX_ANSWER_BYTES, f"{peak >> 20} MiB held for a {len(body)}-byte answer"
    assert "content coding" in message


@pytest.mark.parametrize("kind", sorted(CALLS))
async def test_an_answer_packed_once_unpacks_no_further_than_the_bound(kind: str) -> None:
    answer = Answer(
        zeros_packed(UNPACKED), content_type="application/json", content_encoding="gzip"
    )
    peak, message = await peak_while(CALLS[kind], answer)
    assert peak < 2 * MAX_ANSWER_BYTES + (4 << 20), f"{peak >> 20} MiB held"
    assert "larger than 16,384 KiB" in message


COMPLETION = json.dumps(
    {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}]}
).encode()


@pytest.mark.parametrize(
    ("coding", "pack"),
    [
        ("gzip", lambda b: gzip.compress(b)),
        ("x-gzip", lambda b: gzip.compress(b)),
        ("deflate", zlib.compress),  # zlib-wrapped, as the standard says
        ("deflate", lambda b: zlib.compress(b, wbits=-15)),  # raw, as some servers send it
        ("identity", lambda b: b),
    ],
)
async def test_a_compressed_answer_within_the_bound_still_reads(coding: str, pack) -> None:
    answer = Answer(pack(COMPLETION), content_type="application/json", content_encoding=coding)
    try:
        completion = await whole(answer)
    finally:
        answer.close()
    assert completion.text == "hi"
    # Only the codings it reads are asked for, whatever decoders httpx may have installed.
    assert b"accept-encoding: gzip, deflate\r\n" in answer.received.lower()


async def test_a_coding_the_client_does_not_read_is_refused() -> None:
    answer = Answer(COMPLETION, content_type="application/json", content_encoding="br")
    try:
        with pytest.raises(LLMProtocolError, match="content coding"):
            await whole(answer)
    finally:
        answer.close()
