"""Each way an endpoint can fail gives its own error, with a message that says what to check."""

from __future__ import annotations

import pytest

from jazzmine.llm import (
    LLMAuthError,
    LLMBadRequestError,
    LLMConfig,
    LLMConfigError,
    LLMConnectionError,
    LLMEmptyAnswerError,
    LLMError,
    LLMNotFoundError,
    LLMProtocolError,
    LLMRateLimitError,
    LLMServerError,
    LLMTimeoutError,
    complete,
    stream_chat,
)
from jazzmine.llm.fake.server import DEFAULT_MODEL, FakeLLMServer, Reply

from .conftest import loopback_config

HI = [{"role": "user", "content": "Say hello"}]


async def drain(config: LLMConfig) -> str:
    return "".join([getattr(c, "text", "") async for c in stream_chat(config, HI)])


async def test_a_refused_connection_names_the_url(closed_port: int) -> None:
    config = loopback_config(f"http://127.0.0.1:{closed_port}/v1", model="m")
    with pytest.raises(LLMConnectionError) as caught:
        await drain(config)
    assert f"http://127.0.0.1:{closed_port}/v1/chat/completions" in str(caught.value)
    assert "connection refused" in str(caught.value)


async def test_a_refused_connection_fails_complete_the_same_way(closed_port: int) -> None:
    with pytest.raises(LLMConnectionError, match="connection refused"):
        await complete(loopback_config(f"http://127.0.0.1:{closed_port}/v1", model="m"), HI)


async def test_a_silent_endpoint_times_out(server: FakeLLMServer) -> None:
    server.script(Reply(text="late", stall=2.0))
    config = loopback_config(server.base_url, model=DEFAULT_MODEL, timeout=0.2)
    with pytest.raises(LLMTimeoutError, match=r"sent nothing for 0\.2s"):
        await drain(config)


async def test_a_refused_key_is_an_auth_error_that_never_shows_the_key() -> None:
    async with FakeLLMServer(api_key="right-key") as server:
        config = loopback_config(server.base_url, api_key="wrong-key", model=DEFAULT_MODEL)
        with pytest.raises(LLMAuthError) as caught:
            await drain(config)
    assert caught.value.status == 401
    assert "API key was refused" in str(caught.value)
    assert "wrong-key" not in str(caught.value)


async def test_a_missing_key_says_none_was_set() -> None:
    async with FakeLLMServer(api_key="right-key") as server:
        with pytest.raises(LLMAuthError, match="no API key was set"):
            await drain(loopback_config(server.base_url, model=DEFAULT_MODEL))


async def test_an_echoed_key_never_shows_because_error_bodies_are_never_quoted(
    server: FakeLLMServer,
) -> None:
    server.script(Reply(status=403, message="Key sk-abc is not allowed here"))
    config = loopback_config(server.base_url, api_key="sk-abc", model=DEFAULT_MODEL)
    with pytest.raises(LLMAuthError) as caught:
        await drain(config)
    assert "sk-abc" not in str(caught.value)
    assert "not allowed here" not in str(caught.value)
    assert "answered 403" in str(caught.value)


async def test_a_base_url_without_v1_is_a_not_found_that_suggests_it(server: FakeLLMServer) -> None:
    config = loopback_config(server.base_url.removesuffix("/v1"), model=DEFAULT_MODEL)
    with pytest.raises(LLMNotFoundError, match="usually ends in /v1"):
        await drain(config)


async def test_an_unknown_model_is_a_not_found_that_names_it(server: FakeLLMServer) -> None:
    config = loopback_config(server.base_url, model="gpt-17")
    with pytest.raises(LLMNotFoundError) as caught:
        await drain(config)
    assert "'gpt-17'" in str(caught.value)
    assert "does not exist" not in str(caught.value)  # the server's own words are not quoted


async def test_rate_limiting_reports_when_to_retry(
    server: FakeLLMServer, config: LLMConfig
) -> None:
    server.script(Reply(status=429, message="Slow down", retry_after=7))
    with pytest.raises(LLMRateLimitError) as caught:
        await drain(config)
    assert caught.value.retry_after == 7
    assert "Retry after 7s" in str(caught.value)
    assert "Slow down" not in str(caught.value)


async def test_a_server_error_gives_the_status_and_not_the_body(
    server: FakeLLMServer, config: LLMConfig
) -> None:
    server.script(Reply(status=503, message="Model is loading"))
    with pytest.raises(LLMServerError, match=r"answered 503: the server failed") as caught:
        await drain(config)
    assert caught.value.status == 503
    assert "Model is loading" not in str(caught.value)


async def test_another_client_error_is_a_bad_request(
    server: FakeLLMServer, config: LLMConfig
) -> None:
    server.script(Reply(status=400, message="This model's maximum context length is 8192 tokens"))
    with pytest.raises(LLMBadRequestError, match="answered 400") as caught:
        await drain(config)
    assert "8192" not in str(caught.value)


async def test_a_malformed_event_is_a_protocol_error(
    server: FakeLLMServer, config: LLMConfig
) -> None:
    server.script(Reply(text="a b c d", broken="malformed"))
    with pytest.raises(LLMProtocolError, match="not JSON"):
        await drain(config)


async def test_a_stream_cut_mid_answer_is_a_protocol_error(
    server: FakeLLMServer, config: LLMConfig
) -> None:
    server.script(Reply(text="a b c d", broken="truncated"))
    with pytest.raises(LLMProtocolError, match="broke mid-answer"):
        await drain(config)


async def test_an_error_event_mid_stream_is_a_server_error(
    server: FakeLLMServer, config: LLMConfig
) -> None:
    server.script(Reply(text="a b c d", broken="error"))
    with pytest.raises(LLMServerError, match="reported an error mid-stream") as caught:
        await drain(config)
    assert "The model crashed" not in str(caught.value)


async def test_an_empty_stream_is_an_empty_answer(server: FakeLLMServer, config: LLMConfig) -> None:
    server.script(Reply(text="", finish_reason="length"))
    with pytest.raises(LLMEmptyAnswerError, match="max_tokens") as caught:
        await drain(config)
    assert caught.value.finish_reason == "length"


async def test_a_blank_complete_answer_is_an_empty_answer(
    server: FakeLLMServer, config: LLMConfig
) -> None:
    server.script(Reply(text="  \n"))
    with pytest.raises(LLMEmptyAnswerError):
        await complete(config, HI)


async def test_every_failure_is_an_llm_error() -> None:
    for kind in (
        LLMAuthError,
        LLMBadRequestError,
        LLMConfigError,
        LLMConnectionError,
        LLMEmptyAnswerError,
        LLMNotFoundError,
        LLMProtocolError,
        LLMRateLimitError,
        LLMServerError,
        LLMTimeoutError,
    ):
        assert issubclass(kind, LLMError)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"base_url": "localhost:11434/v1", "model": "m"}, "must be an http"),
        ({"base_url": "ftp://h/v1", "model": "m"}, "must be an http"),
        ({"base_url": "http://h/v1", "model": " "}, "model name is empty"),
        ({"base_url": "http://h/v1", "model": "m", "timeout": 0}, "timeout must be positive"),
    ],
)
def test_an_unusable_config_is_refused_up_front(kwargs: dict, message: str) -> None:
    with pytest.raises(LLMConfigError, match=message):
        LLMConfig(**kwargs)
