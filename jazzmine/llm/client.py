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

Endpoints are outbound URLs (`jazzmine.net`): loopback, private and metadata addresses are refused
unless `allowed_hosts` lists them (e.g. `("127.0.0.1:11434",)` for a local Ollama), judged on the
address each connection opens to (forms check the URL once more when it is saved).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import re
import socket
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

import anyio.to_thread
import httpx

from jazzmine.net import (
    OutboundPolicy,
    OutboundURLRefused,
    outbound_async_client,
    refusal_in,
    url_check,
)

logger = logging.getLogger(__name__)

_ALLOW_HINT = (
    "Internal addresses are refused unless the deployment allows the host "
    "(JAZZMINE_OUTBOUND_ALLOWED_HOSTS in Jazzmine Studio, e.g. 127.0.0.1:11434)."
)
# An error code an endpoint sends (`context_length_exceeded`) is shown; free text never is.
_ERROR_CODE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")


class Message(TypedDict):
    """One chat message."""

    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class LLMConfig:
    """Where and how to call the model; `timeout` bounds connecting and each wait for data."""

    base_url: str
    api_key: str | None = field(default=None, repr=False)
    model: str = ""
    timeout: float = 60.0
    temperature: float | None = None
    max_tokens: int | None = None
    # Hosts that may be reached although not public ("127.0.0.1:8765", "llm.lan").
    allowed_hosts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        url = httpx.URL(self.base_url) if "://" in self.base_url else None
        if url is None or url.scheme not in ("http", "https") or not url.host:
            raise LLMConfigError(
                f"LLM base URL {self.base_url!r} must be an http(s) URL such as "
                "'http://localhost:11434/v1'"
            )
        # Where the URL leads is judged when a request is made (on the address connected to);
        # a stored URL that a deployment no longer allows fails there with a clear message.
        self.outbound  # noqa: B018 - parse the allowed hosts now, so a bad entry fails early
        if not self.model.strip():
            raise LLMConfigError("LLM model name is empty: set the model the endpoint serves")
        if self.timeout <= 0:
            raise LLMConfigError(f"LLM timeout must be positive, not {self.timeout}")

    @property
    def outbound(self) -> OutboundPolicy:
        """Return the outbound policy the allowed hosts make."""
        try:
            return OutboundPolicy.from_entries(self.allowed_hosts)
        except ValueError as exc:
            raise LLMConfigError(f"LLM allowed hosts: {exc}") from None

    @property
    def chat_url(self) -> str:
        """Return the chat-completions URL: the base URL as given plus `/chat/completions`."""
        return self.base_url.rstrip("/") + "/chat/completions"

    @property
    def models_url(self) -> str:
        """Return the model-listing URL."""
        return self.base_url.rstrip("/") + "/models"


@dataclass(frozen=True)
class Usage:
    """Token counts as the endpoint reported them."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None


@dataclass(frozen=True)
class TextDelta:
    """A piece of the answer, as it arrived."""

    text: str


@dataclass(frozen=True)
class Finish:
    """The end of a streamed answer: why it stopped, the whole text and, if reported, usage."""

    text: str
    finish_reason: str | None
    usage: Usage | None
    model: str | None


Chunk = TextDelta | Finish


@dataclass(frozen=True)
class Completion:
    """A whole answer from `complete`."""

    text: str
    finish_reason: str | None
    usage: Usage | None
    model: str | None


# --- errors ---------------------------------------------------------------------------------


class LLMError(Exception):
    """Anything that kept the model from answering; the message says what to check."""

    def __init__(self, message: str, *, url: str | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.status = status


class LLMConfigError(LLMError, ValueError):
    """The configuration cannot work (bad URL, no model)."""


class LLMConnectionError(LLMError):
    """Nothing answered at the URL (refused, unknown host, reset)."""


class LLMTimeoutError(LLMError):
    """The endpoint did not connect or send data within the timeout."""


class LLMAuthError(LLMError):
    """The endpoint refused the API key (401/403)."""


class LLMNotFoundError(LLMError):
    """404: the base URL is wrong or the endpoint does not serve the model."""


class LLMRateLimitError(LLMError):
    """429: too many requests or quota exhausted."""

    def __init__(self, message: str, *, url: str | None, retry_after: float | None) -> None:
        super().__init__(message, url=url, status=429)
        self.retry_after = retry_after


class LLMBadRequestError(LLMError):
    """Another 4xx: the endpoint rejected the request (often a prompt over the context size)."""


class LLMServerError(LLMError):
    """5xx, or an error the endpoint reported in the middle of a stream."""


class LLMProtocolError(LLMError):
    """The answer did not follow the chat-completions protocol (bad JSON, truncated stream)."""


class LLMEmptyAnswerError(LLMError):
    """The endpoint finished without producing any text."""

    def __init__(self, message: str, *, url: str | None, finish_reason: str | None) -> None:
        super().__init__(message, url=url)
        self.finish_reason = finish_reason


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
        with _transport_errors(config, url):
            response = await http.post(
                url,
                json=_payload(config, messages, stream=False),
                headers=_headers(config),
                timeout=_timeout(config),
            )
            if response.status_code != 200:
                raise _status_error(
                    config, url, response.status_code, response.headers, response.text
                )
            body = _json(config, url, response.text)
    return _whole_answer(url, body)


async def list_models(config: LLMConfig, *, client: httpx.AsyncClient | None = None) -> list[str]:
    """Return the model ids the endpoint serves (a cheap way to test a configuration)."""
    url = config.models_url
    async with _client(config, client) as http:
        with _transport_errors(config, url):
            response = await http.get(url, headers=_headers(config), timeout=_timeout(config))
            if response.status_code != 200:
                raise _status_error(
                    config, url, response.status_code, response.headers, response.text
                )
    body = _json(config, url, response.text)
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
            raise LLMConfigError(f"{exc} {_ALLOW_HINT}", url=config.base_url) from None
        yield client
        return
    # Only vetted addresses, no redirects and no env proxies (a proxy would hide the target).
    async with outbound_async_client(policy, timeout=_timeout(config)) as owned:
        yield owned


def _timeout(config: LLMConfig) -> httpx.Timeout:
    """Bound connecting and each read, not the whole answer: long generations are legitimate."""
    return httpx.Timeout(config.timeout, connect=min(config.timeout, 10.0))


def _headers(config: LLMConfig, *, stream: bool = False) -> dict[str, str]:
    """Return the request headers; the key goes only here."""
    headers = {"Accept": "text/event-stream" if stream else "application/json"}
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
    with _transport_errors(config, url):
        async with http.stream(
            "POST",
            url,
            json=payload,
            headers=_headers(config, stream=True),
            timeout=_timeout(config),
        ) as response:
            if response.status_code != 200:
                text = (await response.aread()).decode("utf-8", "replace")
                if (
                    response.status_code in (400, 422)
                    and "stream_options" in text
                    and "stream_options" in payload
                ):
                    raise _StreamOptionsRejectedError
                raise _status_error(config, url, response.status_code, response.headers, text)

            content_type = response.headers.get("content-type", "")
            if "text/event-stream" not in content_type:
                # Some servers ignore `stream: true` and answer with one JSON document.
                body = _json(config, url, (await response.aread()).decode("utf-8", "replace"))
                async for chunk in _from_whole(url, body):
                    yield chunk
                return

            parts: list[str] = []
            finish_reason: str | None = None
            usage: Usage | None = None
            model: str | None = None
            done = False
            async for data in _sse_data(response):
                if data.strip() == "[DONE]":
                    done = True
                    break
                event = _json(config, url, data)
                if not isinstance(event, dict):
                    raise LLMProtocolError(
                        f"{url} streamed a non-object event: {data[:80]}", url=url
                    )
                if "error" in event:
                    raise LLMServerError(
                        f"{url} reported an error mid-stream.{_error_code(config, event)}", url=url
                    )
                model = event.get("model") or model
                usage = _usage(event.get("usage")) or usage
                for choice in event.get("choices") or []:
                    delta = choice.get("delta") or {}
                    text = delta.get("content")
                    if text:
                        parts.append(text)
                        yield TextDelta(text)
                    finish_reason = choice.get("finish_reason") or finish_reason
            if not done and finish_reason is None:
                raise LLMProtocolError(
                    f"The stream from {url} ended before the answer finished (no [DONE])", url=url
                )
    text = "".join(parts)
    if not text.strip():
        raise _empty(url, finish_reason)
    yield Finish(text=text, finish_reason=finish_reason, usage=usage, model=model)


def _whole_answer(url: str, body: Any) -> Completion:
    """Read a non-streamed answer's body: its first choice's text, why it stopped, its usage."""
    try:
        choice = body["choices"][0]
        text = choice["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        raise LLMProtocolError(f"{url} answered without choices[0].message", url=url) from None
    finish_reason = choice.get("finish_reason")
    if not text.strip():
        raise _empty(url, finish_reason)
    return Completion(
        text=text,
        finish_reason=finish_reason,
        usage=_usage(body.get("usage")),
        model=body.get("model"),
    )


async def _from_whole(url: str, body: Any) -> AsyncIterator[Chunk]:
    """Turn a non-streamed answer into the same chunks a stream would give."""
    answer = _whole_answer(url, body)
    yield TextDelta(answer.text)
    yield Finish(
        text=answer.text,
        finish_reason=answer.finish_reason,
        usage=answer.usage,
        model=answer.model,
    )


async def _sse_data(response: httpx.Response) -> AsyncIterator[str]:
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


@contextlib.contextmanager
def _transport_errors(config: LLMConfig, url: str) -> Iterator[None]:
    """Translate httpx transport failures into LLM errors that name the URL."""
    timeout = config.timeout
    try:
        yield
    except httpx.ConnectTimeout as exc:
        raise LLMTimeoutError(
            f"Timed out connecting to {url} after {min(timeout, 10.0):g}s", url=url
        ) from exc
    except httpx.TimeoutException as exc:
        raise LLMTimeoutError(
            f"{url} sent nothing for {timeout:g}s (timeout); the model may be loading or "
            "overloaded, or the timeout too short",
            url=url,
        ) from exc
    except httpx.ConnectError as exc:
        refusal = refusal_in(exc)
        if refusal is not None:
            raise LLMConfigError(
                f"{url} was not contacted: {refusal}. {_ALLOW_HINT}", url=url
            ) from exc
        raise LLMConnectionError(
            f"Could not connect to {url}: {_connect_reason(exc)}. "
            "Is the LLM server running and the base URL right?",
            url=url,
        ) from exc
    except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
        raise LLMProtocolError(f"The connection to {url} broke mid-answer: {exc}", url=url) from exc
    except httpx.HTTPError as exc:
        raise LLMConnectionError(f"Request to {url} failed: {exc}", url=url) from exc


def _connect_reason(exc: BaseException) -> str:
    """Return the OS-level reason under httpx's generic "All connection attempts failed"."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        if isinstance(seen, socket.gaierror):
            return f"unknown host ({seen.strerror})"
        seen = seen.__cause__ or seen.__context__
    return str(exc) or type(exc).__name__


def _status_error(
    config: LLMConfig, url: str, status: int, headers: Mapping[str, str], body: str
) -> LLMError:
    """Return the error for a non-200 answer: the status and a sentence, never the body."""
    code = _error_code(config, body)
    if status in (401, 403):
        key = "no API key was set" if not config.api_key else "the API key was refused"
        return LLMAuthError(f"{url} answered {status}: {key}.{code}", url=url, status=status)
    if status == 404:
        return LLMNotFoundError(
            f"{url} answered 404: check the base URL (it usually ends in /v1) and that the "
            f"endpoint serves model {config.model!r}.{code}",
            url=url,
            status=status,
        )
    if status == 429:
        retry_after = _retry_after(headers.get("retry-after"))
        wait = f" Retry after {retry_after:g}s." if retry_after is not None else ""
        return LLMRateLimitError(
            f"{url} answered 429: rate limited or out of quota.{wait}{code}",
            url=url,
            retry_after=retry_after,
        )
    if status >= 500:
        return LLMServerError(
            f"{url} answered {status}: the server failed; try again later.{code}",
            url=url,
            status=status,
        )
    return LLMBadRequestError(
        f"{url} answered {status}: the endpoint refused the request (often a prompt longer than "
        f"the model's context).{code}",
        url=url,
        status=status,
    )


def _error_code(config: LLMConfig, body: str | Mapping[str, Any]) -> str:
    """Return " Error code: X." when an OpenAI-style body names an identifier-shaped code."""
    data: Any = body
    if isinstance(body, str):
        try:
            data = json.loads(body)
        except ValueError:
            return ""
    error = data.get("error") if isinstance(data, Mapping) else None
    if not isinstance(error, Mapping):
        return ""
    for key in ("code", "type"):
        value = error.get(key)
        if (
            isinstance(value, str)
            and _ERROR_CODE.match(value)
            and not (config.api_key and config.api_key in value)
        ):
            return f" Error code: {value}."
    return ""


def _retry_after(value: str | None) -> float | None:
    """Return Retry-After in seconds when it is a number (HTTP dates are rare here)."""
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _json(config: LLMConfig, url: str, text: str) -> Any:
    """Parse JSON from the endpoint or say what came instead."""
    try:
        return json.loads(text)
    except ValueError:
        raise LLMProtocolError(
            f"{url} sent something that is not JSON (its text is not shown)", url=url
        ) from None


def _usage(data: Any) -> Usage | None:
    """Return usage from an endpoint's `usage` object, if it has any counts."""
    if not isinstance(data, Mapping):
        return None

    def count(key: str) -> int | None:
        value = data.get(key)
        return value if isinstance(value, int) else None

    usage = Usage(count("prompt_tokens"), count("completion_tokens"), count("total_tokens"))
    return usage if usage != Usage() else None


def _empty(url: str, finish_reason: str | None) -> LLMEmptyAnswerError:
    """Return the error for an answer without text, with the likely reason."""
    why = {
        "length": " (it hit max_tokens before writing anything)",
        "content_filter": " (its content filter stopped it)",
    }.get(finish_reason or "", "")
    return LLMEmptyAnswerError(
        f"{url} returned an empty answer{why}; finish_reason={finish_reason!r}",
        url=url,
        finish_reason=finish_reason,
    )
