"""Serve scripted chat completions on loopback, speaking the real HTTP protocol (stdlib asyncio).

    POST /v1/chat/completions   streaming (server-sent events, `[DONE]`) and non-streaming
    GET  /v1/models             the model ids it accepts
    POST /_script               queue canned replies: {"replies": [{"text": "..."}, ...]}
                                ({"reset": true} first clears the queue); control, never
                                behind the API key
    GET  /_requests             the chat requests received so far (bodies, no keys)

Each chat request takes the next queued `Reply` (text, or an error status, a stall, a broken
stream); when the queue is empty, the policy (by default `policy.script_policy`) writes the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .policy import script_policy
from .wire import read_request, send_error, send_json, status_phrase, write_chunk

DEFAULT_MODEL = "jazzmine-fake"

Policy = Callable[[Sequence[Mapping[str, str]]], str]


@dataclass
class Reply:
    """One scripted answer: text to stream, or a failure to act out."""

    text: str = ""
    status: int = 200
    # The error message of a non-200 answer (OpenAI-style `{"error": {"message": ...}}`).
    message: str | None = None
    finish_reason: str = "stop"
    retry_after: float | None = None
    # Seconds to wait before answering at all: makes client timeouts testable.
    stall: float = 0.0
    # "malformed": a non-JSON event; "truncated": the connection drops mid-answer;
    # "error": an error event mid-stream.
    broken: Literal["malformed", "truncated", "error"] | None = None
    token_delay: float | None = None
    # Report usage when the client asks for it; False mimics endpoints that ignore the request.
    usage: bool = True
    # In-process only: the last token waits for this event, so a test can prove streaming.
    release_last: asyncio.Event | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | str) -> Reply:
        """Build a reply from the JSON of `POST /_script` (a bare string is the text)."""
        if isinstance(data, str):
            return cls(text=data)
        known = {f for f in cls.__dataclass_fields__ if f != "release_last"}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown reply fields: {', '.join(sorted(unknown))}")
        return cls(**data)


@dataclass(frozen=True)
class RecordedRequest:
    """A chat request as the server received it (the key is never kept)."""

    path: str
    body: dict[str, Any]
    had_key: bool

    @property
    def prompt(self) -> str:
        """Return the contents of all messages, joined."""
        return "\n".join(str(m.get("content", "")) for m in self.body.get("messages", []))


class FakeLLMServer:
    """Serve scripted chat completions on loopback until closed."""

    def __init__(
        self,
        replies: Iterable[Reply | str] = (),
        *,
        policy: Policy | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        token_delay: float = 0.0,
        models: Sequence[str] = (DEFAULT_MODEL,),
        api_key: str | None = None,
    ) -> None:
        self.replies: deque[Reply] = deque(_reply(r) for r in replies)
        self.policy: Policy = policy or script_policy
        self.host = host
        self.port = port
        self.token_delay = token_delay
        self.models = list(models)
        self.api_key = api_key
        self.requests: list[RecordedRequest] = []
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def base_url(self) -> str:
        """Return the base URL a client should be configured with."""
        return f"http://{self.host}:{self.port}/v1"

    def script(self, *replies: Reply | str) -> None:
        """Queue replies for the next chat requests, in order."""
        self.replies.extend(_reply(r) for r in replies)

    async def start(self) -> None:
        """Listen; with port 0 the OS picks a free port, stored in `port`."""
        self._server = await asyncio.start_server(self._handle, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening and end every open connection."""
        if self._server is not None:
            self._server.close()
            # Python 3.11's wait_closed does not wait for handlers; cancel them ourselves.
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(*self._connections, return_exceptions=True)
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> FakeLLMServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- HTTP -----------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            request = await read_request(reader)
            if request is not None:
                await self._route(*request, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # the client went away; nothing to answer
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()

    async def _route(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        body: bytes,
        writer: asyncio.StreamWriter,
    ) -> None:
        path = path.split("?", 1)[0]
        if (method, path) == ("POST", "/_script"):
            return await self._control(body, writer)
        if (method, path) == ("GET", "/_requests"):
            data = [{"path": r.path, "body": r.body, "had_key": r.had_key} for r in self.requests]
            return await send_json(writer, 200, data)
        if path not in ("/v1/models", "/v1/chat/completions"):
            return await send_error(writer, 404, f"Not found: {method} {path}", "not_found")
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return await send_error(
                writer,
                401,
                "Incorrect API key provided.",
                "invalid_request_error",
                "invalid_api_key",
            )
        if path == "/v1/models":
            if method != "GET":
                return await send_error(writer, 405, "Use GET", "invalid_request_error")
            data = {
                "object": "list",
                "data": [{"id": m, "object": "model", "owned_by": "jazzmine"} for m in self.models],
            }
            return await send_json(writer, 200, data)
        if method != "POST":
            return await send_error(writer, 405, "Use POST", "invalid_request_error")
        await self._chat(path, headers, body, writer)

    async def _control(self, body: bytes, writer: asyncio.StreamWriter) -> None:
        try:
            data = json.loads(body or b"{}")
            if data.get("reset"):
                self.replies.clear()
            self.script(*(Reply.from_dict(r) for r in data.get("replies", [])))
        except (ValueError, TypeError, AttributeError) as exc:
            return await send_error(writer, 400, f"Bad script: {exc}", "invalid_request_error")
        await send_json(writer, 200, {"queued": len(self.replies)})

    async def _chat(
        self, path: str, headers: dict[str, str], raw: bytes, writer: asyncio.StreamWriter
    ) -> None:
        try:
            body = json.loads(raw)
            messages = body["messages"]
            if not isinstance(messages, list) or not all(
                isinstance(m, dict) and isinstance(m.get("content"), str) for m in messages
            ):
                raise TypeError("messages must be a list of {role, content}")
        except (ValueError, KeyError, TypeError) as exc:
            return await send_error(writer, 400, f"Invalid request: {exc}", "invalid_request_error")
        model = body.get("model")
        if model not in self.models:
            return await send_error(
                writer,
                404,
                f"The model {model!r} does not exist.",
                "invalid_request_error",
                "model_not_found",
            )
        self.requests.append(RecordedRequest(path, body, "authorization" in headers))
        try:
            reply = self.replies.popleft() if self.replies else Reply(text=self.policy(messages))
        except Exception as exc:  # a broken policy is the fake's bug: answer like a server would
            return await send_error(writer, 500, f"Policy failed: {exc!r}", "server_error")
        if reply.stall:
            await asyncio.sleep(reply.stall)
        if reply.status != 200:
            extra = (
                {"Retry-After": f"{reply.retry_after:g}"} if reply.retry_after is not None else {}
            )
            message = reply.message or status_phrase(reply.status)
            return await send_error(writer, reply.status, message, "server_error", extra=extra)

        usage = {
            "prompt_tokens": sum(_count_tokens(m["content"]) for m in messages),
            "completion_tokens": len(_pieces(reply.text)),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if body.get("stream"):
            wants_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            await self._stream(writer, model, reply, usage if wants_usage and reply.usage else None)
        else:
            await send_json(
                writer,
                200,
                {
                    "id": _completion_id(),
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply.text},
                            "finish_reason": reply.finish_reason,
                        }
                    ],
                    **({"usage": usage} if reply.usage else {}),
                },
            )

    async def _stream(
        self, writer: asyncio.StreamWriter, model: str, reply: Reply, usage: dict[str, int] | None
    ) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        )
        ident, created = _completion_id(), int(time.time())

        async def event(data: dict[str, Any] | str) -> None:
            text = data if isinstance(data, str) else json.dumps(data)
            await write_chunk(writer, f"data: {text}\n\n".encode())

        def chunk(delta: dict[str, str], finish_reason: str | None = None) -> dict[str, Any]:
            return {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }

        delay = self.token_delay if reply.token_delay is None else reply.token_delay
        pieces = _pieces(reply.text)
        await event(chunk({"role": "assistant", "content": ""}))
        for index, piece in enumerate(pieces):
            if index == len(pieces) - 1 and reply.release_last is not None:
                await reply.release_last.wait()
            if index and delay:
                await asyncio.sleep(delay)
            if reply.broken and index >= len(pieces) // 2:
                return await _act_broken(writer, reply.broken, event)
            await event(chunk({"content": piece}))
        if reply.broken:
            return await _act_broken(writer, reply.broken, event)
        await event(chunk({}, reply.finish_reason))
        if usage is not None:
            await event({**chunk({}), "choices": [], "usage": usage})
        await event("[DONE]")
        await write_chunk(writer, b"")


async def _act_broken(writer: asyncio.StreamWriter, how: str, event: Callable[..., Any]) -> None:
    """Break the stream the way a failing server would."""
    if how == "malformed":
        await event('{"choices": [{"delta": {"content": "oops"')
        await event("[DONE]")
        await write_chunk(writer, b"")
    elif how == "error":
        await event(
            {"error": {"message": "The model crashed while generating.", "type": "server_error"}}
        )
        await write_chunk(writer, b"")
    else:
        # "truncated": drop the connection without ending the chunked body.
        writer.transport.abort()


def _reply(value: Reply | str) -> Reply:
    return value if isinstance(value, Reply) else Reply(text=value)


def _completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex[:24]}"


def _pieces(text: str) -> list[str]:
    """Split text into token-like pieces: words with their leading whitespace."""
    return re.findall(r"\s*\S+|\s+", text)


def _count_tokens(text: str) -> int:
    """Estimate a token count the way a tokenizer roughly would: words and punctuation."""
    return len(re.findall(r"\w+|[^\w\s]", text))
