"""An endpoint that sends its answer a byte at a time is cut off at the exchange's total timeout.

`timeout` bounds each wait for data, so a byte every few seconds never trips it: the web
process (where the playground reads its LLM) would hold the request for as long as the
endpoint liked. `total_timeout` ends the whole exchange, however the time was spent.
"""

from __future__ import annotations

import json
import time

import pytest

from jazzmine.llm import LLMConfig, LLMConfigError, LLMTimeoutError, complete, stream_chat

from .conftest import loopback_config
from .listener import Listener, http_answer

HI = [{"role": "user", "content": "Say hello"}]
ANSWER = json.dumps(
    {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi" * 40}}]}
).encode()


async def whole(config: LLMConfig) -> None:
    await complete(config, HI)


async def streamed(config: LLMConfig) -> None:
    async for _ in stream_chat(config, HI):
        pass


@pytest.mark.parametrize("call", [whole, streamed])
async def test_a_byte_at_a_time_answer_ends_at_the_total_timeout(call) -> None:
    # ~170 bytes, 0.05 s apart: 8 s in all, never a wait near the 5 s per-read timeout.
    listener = Listener(http_answer("200 OK", ANSWER, content_type="application/json"), drip=0.05)
    config = loopback_config(
        f"http://127.0.0.1:{listener.port}/v1", model="m", timeout=5, total_timeout=1.5
    )
    started = time.monotonic()
    try:
        with pytest.raises(LLMTimeoutError, match=r"did not finish .* within 1\.5s"):
            await call(config)
    finally:
        listener.close()
    assert time.monotonic() - started < 4


def test_the_total_timeout_has_a_bound_by_default_and_must_be_positive() -> None:
    assert 0 < LLMConfig("https://api.example.com/v1", model="m").total_timeout <= 900
    with pytest.raises(LLMConfigError, match="total timeout"):
        LLMConfig("https://api.example.com/v1", model="m", total_timeout=0)
