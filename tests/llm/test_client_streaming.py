"""The streaming client against the fake server over real loopback HTTP."""

from __future__ import annotations

import asyncio
import json

import httpx

from jazzmine.llm import Finish, LLMConfig, TextDelta, complete, list_models, stream_chat
from jazzmine.llm.fake.server import DEFAULT_MODEL, FakeLLMServer, Reply

from .conftest import loopback_config

HI = [{"role": "user", "content": "Say hello"}]


async def collect(config: LLMConfig, messages=HI) -> list:
    return [chunk async for chunk in stream_chat(config, messages)]


async def test_the_first_delta_arrives_before_the_last_is_sent(
    server: FakeLLMServer, config: LLMConfig
) -> None:
    gate = asyncio.Event()
    server.script(Reply(text="one two three four", release_last=gate))
    seen: list[str] = []
    async for chunk in stream_chat(config, HI):
        if isinstance(chunk, TextDelta):
            if not seen:
                # The server is parked before its last token until we open the gate.
                assert not gate.is_set()
                gate.set()
            seen.append(chunk.text)
    assert seen == ["one", " two", " three", " four"]


async def test_deltas_join_into_the_finish_text_with_reason_and_usage(
    server: FakeLLMServer, config: LLMConfig
) -> None:
    server.script(Reply(text="print('hi')\nemit_result(1)\n", finish_reason="stop"))
    chunks = await collect(config)
    deltas = [c.text for c in chunks if isinstance(c, TextDelta)]
    finish = chunks[-1]
    assert isinstance(finish, Finish)
    assert "".join(deltas) == finish.text == "print('hi')\nemit_result(1)\n"
    assert finish.finish_reason == "stop"
    assert finish.model == DEFAULT_MODEL
    assert finish.usage is not None
    assert finish.usage.completion_tokens == len(deltas)
    assert finish.usage.prompt_tokens == 2
    assert finish.usage.total_tokens == len(deltas) + 2


async def test_the_request_asks_for_usage_and_carries_the_configured_knobs(
    server: FakeLLMServer,
) -> None:
    config = loopback_config(server.base_url, model=DEFAULT_MODEL, temperature=0.1, max_tokens=64)
    server.script("ok")
    await collect(config)
    body = server.requests[0].body
    assert body["model"] == DEFAULT_MODEL
    assert body["messages"] == HI
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["temperature"] == 0.1
    assert body["max_tokens"] == 64


async def test_unset_knobs_are_left_to_the_endpoint(
    server: FakeLLMServer, config: LLMConfig
) -> None:
    server.script("ok")
    await collect(config)
    assert "temperature" not in server.requests[0].body
    assert "max_tokens" not in server.requests[0].body


async def test_an_endpoint_that_ignores_the_usage_request_still_streams(
    server: FakeLLMServer, config: LLMConfig
) -> None:
    server.script(Reply(text="a b", usage=False))
    finish = (await collect(config))[-1]
    assert isinstance(finish, Finish)
    assert finish.text == "a b"
    assert finish.usage is None


async def test_an_endpoint_that_refuses_stream_options_is_asked_again_without_them(
    server: FakeLLMServer, config: LLMConfig
) -> None:
    server.script(
        Reply(status=400, message="Unrecognized request argument supplied: stream_options"),
        "fine",
    )
    finish = (await collect(config))[-1]
    assert isinstance(finish, Finish) and finish.text == "fine"
    assert len(server.requests) == 2
    assert "stream_options" not in server.requests[1].body


async def test_an_endpoint_that_answers_a_stream_request_with_json_still_works() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            json={
                "model": "m",
                "choices": [{"message": {"content": "whole"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1},
            },
        )

    config = LLMConfig("http://llm.test/v1", model="m", allowed_hosts=("llm.test",))
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        chunks = [c async for c in stream_chat(config, HI, client=client)]
    assert chunks[0] == TextDelta("whole")
    assert isinstance(chunks[1], Finish)
    assert chunks[1].usage is not None and chunks[1].usage.prompt_tokens == 3


async def test_keep_alive_comments_and_multi_line_data_are_understood() -> None:
    event = {"choices": [{"delta": {"content": "hi"}, "finish_reason": "stop"}]}
    pretty = json.dumps(event, indent=1).replace("\n", "\ndata: ")
    stream = f": keep-alive\n\ndata: {pretty}\n\ndata: [DONE]\n\n"

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text=stream, headers={"content-type": "text/event-stream"})

    config = LLMConfig("http://llm.test/v1", model="m", allowed_hosts=("llm.test",))
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        chunks = [c async for c in stream_chat(config, HI, client=client)]
    assert chunks == [TextDelta("hi"), Finish("hi", "stop", None, None)]


async def test_complete_returns_the_whole_answer_with_usage(
    server: FakeLLMServer, config: LLMConfig
) -> None:
    server.script(Reply(text="all at once", finish_reason="length"))
    result = await complete(config, HI)
    assert result.text == "all at once"
    assert result.finish_reason == "length"
    assert result.usage is not None and result.usage.completion_tokens == 3
    assert server.requests[0].body["stream"] is False


async def test_list_models_names_what_the_endpoint_serves(config: LLMConfig) -> None:
    assert await list_models(config) == [DEFAULT_MODEL]


async def test_the_base_url_is_used_as_given_with_chat_completions_appended() -> None:
    assert LLMConfig("http://h:1/v1", model="m").chat_url == "http://h:1/v1/chat/completions"
    assert LLMConfig("http://h:1/v1/", model="m").chat_url == "http://h:1/v1/chat/completions"
    assert LLMConfig("http://h:1", model="m").chat_url == "http://h:1/chat/completions"
    assert LLMConfig("http://h/api/v1", model="m").models_url == "http://h/api/v1/models"


async def test_the_api_key_goes_as_a_bearer_token_and_nowhere_else() -> None:
    async with FakeLLMServer(api_key="sk-secret-123") as server:
        config = loopback_config(server.base_url, api_key="sk-secret-123", model=DEFAULT_MODEL)
        server.script("ok")
        await collect(config)
        assert server.requests[0].had_key
        assert "sk-secret-123" not in repr(config)
