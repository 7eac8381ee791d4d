"""An async client for any OpenAI-compatible chat-completions endpoint.

Works with OpenAI, Ollama, vLLM, LM Studio, the llama.cpp server and anything else that speaks
`POST {base_url}/chat/completions`. The URL rule is the one OpenAI's own clients follow: the
base URL is used as given and `/chat/completions` is appended, so it must carry the API path
prefix itself:

    https://api.openai.com/v1        -> https://api.openai.com/v1/chat/completions
    http://localhost:11434/v1        -> Ollama
    http://localhost:8000/v1         -> vLLM, llama.cpp server (LM Studio: port 1234)

A base URL without `/v1` usually answers 404, and the resulting `LLMNotFoundError` says so.

The API key is sent only in the Authorization header: it is kept out of `repr`, logs and error
messages. Error messages never quote what a failed endpoint answered (only its status code and an
OpenAI-style error code): a URL aimed at an internal service must not read it back to the user.
Answers are read within a size bound (`bodies`): an endpoint that sends without end fails the
call instead of filling this process's memory.

Endpoints are outbound URLs (`jazzmine.net`): loopback, private and metadata addresses are refused
unless `allowed_hosts` lists them (e.g. `("127.0.0.1:11434",)` for a local Ollama), judged on the
address each connection opens to (forms check the URL once more when it is saved).
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import anyio.to_thread
import httpx

from jazzmine.net import OutboundURLRefused, outbound_async_client, url_check

from .answers import (
    chunks_from_whole,
    empty_answer_error,
    model_name,
    parse_json,
    parse_usage,
    stream_choice,
    whole_answer,
)
from .bodies import ACCEPT_ENCODING, read_head, read_within
from .config import LLMConfig
from .errors import LLMConfigError, LLMProtocolError, LLMServerError
from .http_errors import ALLOW_HINT, error_code, status_error, transport_errors
from .sse import sse_data
from .types import Chunk, Completion, Finish, TextDelta, Usage

logger = logging.getLogger(__name__)


# --- public API -----------------------------------------------------------------------------


async def stream_chat(
    config: LLMConfig,
    messages: Sequence[Mapping[str, str]],
    *,
    client: httpx.AsyncClient | None = None,
) -> AsyncIterator[Chunk]:
    """Yield the answer's text deltas as they arrive, then one `Finish`."""
    async with _client(config, client) as http:
        payload = _payload(config, messages, stream=True)
        try:
            async for chunk in _stream(config, http, payload):
                yield chunk
        except _StreamOptionsRejectedError:
            # Some older servers refuse the usage request outright; usage is optional, so ask again
            # without it rather than fail.
            logger.info("%s refused stream_options; retrying without usage", config.chat_url)
            del payload["stream_options"]
            async for chunk in _stream(config, http, payload):
                yield chunk


async def complete(
    config: LLMConfig,
    messages: Sequence[Mapping[str, str]],
    *,
    client: httpx.AsyncClient | None = None,
) -> Completion:
    """Return the whole answer of a non-streaming request."""
    url = config.chat_url
    async with _client(config, client) as http:
        with transport_errors(config, url):
            async with http.stream(
                "POST",
                url,
                json=_payload(config, messages, stream=False),
                headers=_headers(config),
                timeout=_timeout(config),
            ) as response:
                await _refuse_unless_ok(config, url, response)
                body = parse_json(url, await read_within(response, url=url))
    return whole_answer(url, body)


async def _refuse_unless_ok(config: LLMConfig, url: str, response: httpx.Response) -> None:
    """Raise the error of an answer that is not 200 (reading no more than its head)."""
    if response.status_code != 200:
        raise status_error(
            config, url, response.status_code, response.headers, await read_head(response)
        )


async def list_models(config: LLMConfig, *, client: httpx.AsyncClient | None = None) -> list[str]:
    """Return the model ids the endpoint serves (a cheap way to test a configuration)."""
    url = config.models_url
    async with _client(config, client) as http:
        with transport_errors(config, url):
            async with http.stream(
                "GET", url, headers=_headers(config), timeout=_timeout(config)
            ) as response:
                await _refuse_unless_ok(config, url, response)
                text = await read_within(response, url=url)
    body = parse_json(url, text)
    try:
        return [str(m["id"]) for m in body["data"]]
    except (KeyError, TypeError):
        raise LLMProtocolError(f"{url} answered without a data list of models", url=url) from None


# --- internals ------------------------------------------------------------------------------


class _StreamOptionsRejectedError(Exception):
    """The endpoint answered 400/422 because it does not know `stream_options`."""


@contextlib.asynccontextmanager
async def _client(
    config: LLMConfig, client: httpx.AsyncClient | None
) -> AsyncIterator[httpx.AsyncClient]:
    """Use the caller's client, or own a fresh one for the duration of a call."""
    policy = config.outbound
    if client is not None:
        # The caller's transport decides where it connects, so the name is vetted here instead.
        try:
            await anyio.to_thread.run_sync(
                functools.partial(url_check, config.base_url, policy=policy)
            )
        except OutboundURLRefused as exc:
            raise LLMConfigError(f"{exc} {ALLOW_HINT}", url=config.base_url) from None
        yield client
        return
    # Only vetted addresses, no redirects and no env proxies (a proxy would hide the target).
    async with outbound_async_client(
        policy, timeout=_timeout(config), total_timeout=config.total_timeout
    ) as owned:
        yield owned


def _timeout(config: LLMConfig) -> httpx.Timeout:
    """Bound connecting and each read (the whole exchange: `config.total_timeout`)."""
    return httpx.Timeout(config.timeout, connect=min(config.timeout, 10.0))


def _headers(config: LLMConfig, *, stream: bool = False) -> dict[str, str]:
    """Return the request headers; the key goes only here."""
    headers = {
        "Accept": "text/event-stream" if stream else "application/json",
        # What `bodies` unpacks, whatever decoders httpx finds installed (brotli, zstd).
        "Accept-Encoding": ACCEPT_ENCODING,
    }
    if config.api_key:
        headers["Authorization"] = f"Bearer {config.api_key}"
    return headers


def _payload(
    config: LLMConfig, messages: Sequence[Mapping[str, str]], *, stream: bool
) -> dict[str, Any]:
    """Return the request body; optional knobs are sent only when set."""
    payload: dict[str, Any] = {
        "model": config.model,
        "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
        "stream": stream,
    }
    if stream:
        payload["stream_options"] = {"include_usage": True}
    if config.temperature is not None:
        payload["temperature"] = config.temperature
    if config.max_tokens is not None:
        payload["max_tokens"] = config.max_tokens
    return payload


async def _stream(
    config: LLMConfig, http: httpx.AsyncClient, payload: dict[str, Any]
) -> AsyncIterator[Chunk]:
    """Run one streaming request and translate its server-sent events into chunks."""
    url = config.chat_url
    logger.debug("streaming chat completion from %s (model %s)", url, config.model)
    with transport_errors(config, url):
        async with http.stream(
            "POST",
            url,
            json=payload,
            headers=_headers(config, stream=True),
            timeout=_timeout(config),
        ) as response:
            if response.status_code != 200:
                text = await read_head(response)
                if (
                    response.status_code in (400, 422)
                    and "stream_options" in text
                    and "stream_options" in payload
                ):
                    raise _StreamOptionsRejectedError
                raise status_error(config, url, response.status_code, response.headers, text)

            content_type = response.headers.get("content-type", "")
            if "text/event-stream" not in content_type:
                # Some servers ignore `stream: true` and answer with one JSON document.
                body = parse_json(url, await read_within(response, url=url))
                async for chunk in chunks_from_whole(url, body):
                    yield chunk
                return

            parts: list[str] = []
            finish_reason: str | None = None
            usage: Usage | None = None
            model: str | None = None
            done = False
            async for data in sse_data(response, url=url):
                if data.strip() == "[DONE]":
                    done = True
                    break
                event = parse_json(url, data)
                if not isinstance(event, dict):
                    # Its kind only: the event's text is the answer's, never shown.
                    raise LLMProtocolError(
                        f"{url} streamed an event that is not a JSON object", url=url
                    )
                if "error" in event:
                    raise LLMServerError(
                        f"{url} reported an error mid-stream.{error_code(config, event)}", url=url
                    )
                model = model_name(event) or model
                usage = parse_usage(event.get("usage")) or usage
                choices = event.get("choices") or []
                if not isinstance(choices, list):
                    raise LLMProtocolError(f"{url} streamed choices that are not a list", url=url)
                for choice in choices:
                    text, reason = stream_choice(url, choice)
                    if text:
                        parts.append(text)
                        yield TextDelta(text)
                    finish_reason = reason or finish_reason
            if not done and finish_reason is None:
                raise LLMProtocolError(
                    f"The stream from {url} ended before the answer finished (no [DONE])", url=url
                )
    text = "".join(parts)
    if not text.strip():
        raise empty_answer_error(url, finish_reason)
    yield Finish(text=text, finish_reason=finish_reason, usage=usage, model=model)
