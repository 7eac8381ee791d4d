"""A local stand-in for an OpenAI-compatible LLM server, for tests and for demos without one.

It speaks the real HTTP protocol on loopback (stdlib asyncio only):

    POST /v1/chat/completions   streaming (server-sent events, `[DONE]`) and non-streaming
    GET  /v1/models             the model ids it accepts
    POST /_script               queue canned replies: {"replies": [{"text": "..."}, ...]}
                                ({"reset": true} first clears the queue); control, never
                                behind the API key
    GET  /_requests             the chat requests received so far (bodies, no keys)

Each chat request takes the next queued `Reply` (text, or an error status, a stall, a broken
stream); when the queue is empty, `script_policy` writes a plausible script for the tools in
the prompt. Its demo of the retry loop: a task that mentions "first" gets, on attempt 1, the
classic mistake `r.data[0]` (KeyError: 0 on a dict); the retry prompt gets the fixed script.

    python -m jazzmine.llm.fake_server --port 8765      # then base URL http://127.0.0.1:8765/v1
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import re
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Literal
from xml.sax.saxutils import unescape

DEFAULT_MODEL = "jazzmine-fake"
_MAX_BODY = 16 * 1024 * 1024

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
            request = await _read_request(reader)
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
            return await _send_json(writer, 200, data)
        if path not in ("/v1/models", "/v1/chat/completions"):
            return await _send_error(writer, 404, f"Not found: {method} {path}", "not_found")
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return await _send_error(
                writer,
                401,
                "Incorrect API key provided.",
                "invalid_request_error",
                "invalid_api_key",
            )
        if path == "/v1/models":
            if method != "GET":
                return await _send_error(writer, 405, "Use GET", "invalid_request_error")
            data = {
                "object": "list",
                "data": [{"id": m, "object": "model", "owned_by": "jazzmine"} for m in self.models],
            }
            return await _send_json(writer, 200, data)
        if method != "POST":
            return await _send_error(writer, 405, "Use POST", "invalid_request_error")
        await self._chat(path, headers, body, writer)

    async def _control(self, body: bytes, writer: asyncio.StreamWriter) -> None:
        try:
            data = json.loads(body or b"{}")
            if data.get("reset"):
                self.replies.clear()
            self.script(*(Reply.from_dict(r) for r in data.get("replies", [])))
        except (ValueError, TypeError, AttributeError) as exc:
            return await _send_error(writer, 400, f"Bad script: {exc}", "invalid_request_error")
        await _send_json(writer, 200, {"queued": len(self.replies)})

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
            return await _send_error(
                writer, 400, f"Invalid request: {exc}", "invalid_request_error"
            )
        model = body.get("model")
        if model not in self.models:
            return await _send_error(
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
            return await _send_error(writer, 500, f"Policy failed: {exc!r}", "server_error")
        if reply.stall:
            await asyncio.sleep(reply.stall)
        if reply.status != 200:
            extra = (
                {"Retry-After": f"{reply.retry_after:g}"} if reply.retry_after is not None else {}
            )
            message = reply.message or _phrase(reply.status)
            return await _send_error(writer, reply.status, message, "server_error", extra=extra)

        usage = {
            "prompt_tokens": sum(_count_tokens(m["content"]) for m in messages),
            "completion_tokens": len(_pieces(reply.text)),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if body.get("stream"):
            wants_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            await self._stream(writer, model, reply, usage if wants_usage and reply.usage else None)
        else:
            await _send_json(
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
            await _write_chunk(writer, f"data: {text}\n\n".encode())

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
        await _write_chunk(writer, b"")


async def _act_broken(writer: asyncio.StreamWriter, how: str, event: Callable[..., Any]) -> None:
    """Break the stream the way a failing server would."""
    if how == "malformed":
        await event('{"choices": [{"delta": {"content": "oops"')
        await event("[DONE]")
        await _write_chunk(writer, b"")
    elif how == "error":
        await event(
            {"error": {"message": "The model crashed while generating.", "type": "server_error"}}
        )
        await _write_chunk(writer, b"")
    else:
        # "truncated": drop the connection without ending the chunked body.
        writer.transport.abort()


# --- HTTP plumbing ---------------------------------------------------------------------------


async def _read_request(
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


async def _write_chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    """Write one chunk of a chunked body (empty data ends the body) and flush it."""
    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    await writer.drain()


async def _send_json(
    writer: asyncio.StreamWriter, status: int, data: Any, *, extra: Mapping[str, str] | None = None
) -> None:
    """Send a complete JSON response and flush it."""
    payload = json.dumps(data).encode()
    head = [
        f"HTTP/1.1 {status} {_phrase(status)}",
        "Content-Type: application/json",
        f"Content-Length: {len(payload)}",
        "Connection: close",
        *(f"{k}: {v}" for k, v in (extra or {}).items()),
    ]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
    await writer.drain()


async def _send_error(
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
    await _send_json(writer, status, error, extra=extra)


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


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


# --- the default policy ----------------------------------------------------------------------

_TOOL = re.compile(r"<tool name=([\"'])(?P<name>.+?)\1>(?P<body>.*?)</tool>", re.DOTALL)
_PARAMETER = re.compile(
    r"<parameter name=([\"'])(?P<name>.+?)\1 type=([\"'])(?P<type>.+?)\3 "
    r"required=([\"'])(?P<required>.+?)\5>(?P<body>.*?)</parameter>",
    re.DOTALL,
)
_RETRY = re.compile(r"Your previous script for this task failed \(attempt (\d+)\)")
_TASK = re.compile(r"^Task:\n(?P<task>.*?)(?:\n\nAvailable tools:|\n*\Z)", re.DOTALL | re.MULTILINE)
# Words in tool names that say nothing about what the tool is about.
_VERBS = {
    "get",
    "list",
    "fetch",
    "find",
    "search",
    "set",
    "create",
    "update",
    "delete",
    "read",
    "run",
}


@dataclass(frozen=True)
class _Param:
    name: str
    type: str
    required: bool
    sample: str | None  # the first example, option or default, as XML text


def script_policy(messages: Sequence[Mapping[str, str]], *, fences: bool = False) -> str:
    """Write a plausible script body for the task and tools in the prompt."""
    prompt = "\n".join(m["content"] for m in messages)
    tools = {m["name"]: _params(m["body"]) for m in _TOOL.finditer(prompt)}
    match = _TASK.search(prompt)
    task = match["task"].strip() if match else ""
    is_retry = _RETRY.search(prompt) is not None
    wants_first = re.search(r"\bfirst\b", task, re.IGNORECASE) is not None

    lines: list[str] = []
    if not tools:
        lines += [
            'emit_log("No tools are available for this task.")',
            'emit_result({"task": ' + json.dumps(task) + "})",
        ]
    else:
        lines.append("results = {}")
        for index, name in enumerate(_pick_tools(task, tools)):
            args = ", ".join(f"{p.name}={_value(p, task)}" for p in tools[name] if p.required)
            lines += [
                f"r = {name}({args})",
                "if r.success:",
                f"    emit_intermediate({json.dumps(name)}, r.data)",
                f"    results[{json.dumps(name)}] = r.data",
            ]
            if wants_first and index == 0:
                if is_retry:
                    # The fix the KeyError hint asks for: find the list inside the dict.
                    lines += [
                        "    first = None",
                        "    for value in (r.data or {}).values():",
                        "        if isinstance(value, list) and value:",
                        "            first = value[0]",
                        "            break",
                        '    results["first"] = first if first is not None else r.data',
                    ]
                else:
                    # The classic first-attempt mistake: treating the data dict as a list.
                    lines.append('    results["first"] = r.data[0]')
            lines += [
                "else:",
                f'    emit_log("{name} failed: " + str(r.message))',
                f'    results[{json.dumps(name)}] = {{"error": r.message}}',
            ]
        lines.append("emit_result(results)")
    body = "\n".join(lines) + "\n"
    return f"```python\n{body}```\n" if fences else body


def _params(body: str) -> list[_Param]:
    params = []
    for m in _PARAMETER.finditer(body):
        sample = re.search(
            r"<(?:example|option|default)>(.*?)</(?:example|option|default)>", m["body"], re.DOTALL
        )
        params.append(
            _Param(
                name=unescape(m["name"]),
                type=unescape(m["type"]).lower(),
                required=m["required"] == "True",
                sample=unescape(sample.group(1)) if sample else None,
            )
        )
    return params


def _pick_tools(task: str, tools: Mapping[str, list[_Param]]) -> list[str]:
    """Return the tools whose names share a noun with the task (at most 3), else the first."""
    words = {w.rstrip("s") for w in re.findall(r"[a-z]+", task.lower())}
    chosen = [
        name
        for name in tools
        if ({p.rstrip("s") for p in name.lower().split("_")} - _VERBS) & words
    ]
    return chosen[:3] or [next(iter(tools))]


def _value(param: _Param, task: str) -> str:
    """Return a Python literal for a required argument: a sample, a number in the task, a stub."""
    number = re.search(r"\b\d+(?:\.\d+)?\b", task)
    if param.sample is not None:
        if param.type.startswith(("str", "text")):
            return json.dumps(param.sample)
        with contextlib.suppress(ValueError):
            return repr(json.loads(param.sample))
        return json.dumps(param.sample)
    if param.type.startswith("int"):
        return number.group(0).split(".")[0] if number else "1"
    if param.type.startswith(("float", "number")):
        return number.group(0) if number else "1.0"
    if param.type.startswith("bool"):
        return "True"
    if param.type.startswith(("list", "array")):
        return "[]"
    if param.type.startswith(("dict", "object")):
        return "{}"
    if number and "id" in param.name.lower():
        return json.dumps(number.group(0))
    return json.dumps(param.name.replace("_", " "))


# --- running it ------------------------------------------------------------------------------


@contextlib.contextmanager
def serving_in_thread(server: FakeLLMServer) -> Iterator[FakeLLMServer]:
    """Run the server on its own event loop in a daemon thread (for synchronous callers)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="fake-llm", daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(server.start(), loop).result(timeout=10)
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


async def _serve(server: FakeLLMServer) -> None:
    await server.start()
    print(f"Fake LLM at {server.base_url} (models: {', '.join(server.models)})", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await server.close()


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--delay", type=float, default=0.02, help="seconds between streamed tokens")
    parser.add_argument(
        "--model", action="append", help=f"model id to accept (default {DEFAULT_MODEL})"
    )
    parser.add_argument("--api-key", help="require this Bearer key on API requests")
    parser.add_argument("--fences", action="store_true", help="wrap scripts in Markdown fences")
    args = parser.parse_args(argv)
    server = FakeLLMServer(
        policy=functools.partial(script_policy, fences=args.fences),
        host=args.host,
        port=args.port,
        token_delay=args.delay,
        models=args.model or (DEFAULT_MODEL,),
        api_key=args.api_key,
    )
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(server))


if __name__ == "__main__":
    main()
