"""An LLM error names the kind of failure, never the text the endpoint answered: the playground
shows the message in the browser, and the endpoint may be an internal service read back.

Two paths quoted it: h11's "illegal header line: bytearray(b'...')" and "streamed a non-object
event: <data>"; an odd finish_reason was echoed too, and a deeply nested event was a
RecursionError instead of an LLM error.
"""

from __future__ import annotations

import pytest

from jazzmine.llm import LLMError, LLMProtocolError, complete, stream_chat

from .conftest import loopback_config
from .listener import Listener, http_answer

HI = [{"role": "user", "content": "hi"}]
SECRET = b"redis_password=hunter2"
SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"


def sse(*events: bytes) -> bytes:
    return SSE_HEAD + b"".join(b"data: " + e + b"\n\n" for e in events)


def whole(body: bytes) -> bytes:
    return http_answer("200 OK", body, content_type="application/json")


STREAMED = {
    "malformed header line": b"HTTP/1.1 200 OK\r\n" + SECRET + b"\r\n\r\n",
    "malformed header name": b"HTTP/1.1 200 OK\r\n" + SECRET + b" x: y\r\n\r\n",
    "malformed status line": b"HTTP/1.1 " + SECRET + b"\r\n\r\n",
    "string event": sse(b'"' + SECRET + b'"'),
    "number event": sse(b"1" + b"0" * 70 + b"2202"),
    "list event": sse(b'["' + SECRET + b'", 1]'),
    "event nested 5000 deep": sse(b"[" * 5000 + b'"' + SECRET + b'"' + b"]" * 5000),
    "empty answer with an odd finish_reason": sse(
        b'{"choices": [{"delta": {}, "finish_reason": "' + SECRET + b'"}]}', b"[DONE]"
    ),
    "empty answer with a finish_reason object": sse(
        b'{"choices": [{"delta": {}, "finish_reason": {"x": "' + SECRET + b'"}}]}', b"[DONE]"
    ),
}
WHOLE = {
    "whole answer nested 5000 deep": whole(b"[" * 5000 + b"]" * 5000),
    "whole empty answer with an odd finish_reason": whole(
        b'{"choices": [{"message": {"content": ""}, "finish_reason": "' + SECRET + b'"}]}'
    ),
}


async def _error_of(answer: bytes, *, streamed: bool) -> LLMError:
    listener = Listener(answer=answer)
    try:
        config = loopback_config(f"http://127.0.0.1:{listener.port}/v1", model="m", timeout=5.0)
        with pytest.raises(LLMError) as caught:
            if streamed:
                async for _ in stream_chat(config, HI):
                    pass
            else:
                await complete(config, HI)
    finally:
        listener.close()
    return caught.value


@pytest.mark.parametrize("case", STREAMED)
async def test_a_streamed_failure_does_not_quote_the_answer(case: str) -> None:
    error = await _error_of(STREAMED[case], streamed=True)
    assert "hunter2" not in str(error) and "10000" not in str(error), str(error)
    assert "127.0.0.1" in str(error)  # it still says which endpoint failed


@pytest.mark.parametrize("case", WHOLE)
async def test_a_whole_answer_failure_does_not_quote_the_answer(case: str) -> None:
    error = await _error_of(WHOLE[case], streamed=False)
    assert "hunter2" not in str(error), str(error)


async def test_a_broken_header_is_named_as_a_protocol_failure() -> None:
    error = await _error_of(STREAMED["malformed header line"], streamed=True)
    assert isinstance(error, LLMProtocolError)
    assert "broke the HTTP protocol" in str(error)


async def test_a_non_object_event_is_named_as_such() -> None:
    error = await _error_of(STREAMED["list event"], streamed=True)
    assert isinstance(error, LLMProtocolError)
    assert "not a JSON object" in str(error)


async def test_a_standard_finish_reason_is_still_shown() -> None:
    answer = sse(b'{"choices": [{"delta": {}, "finish_reason": "length"}]}', b"[DONE]")
    error = await _error_of(answer, streamed=True)
    assert "finish_reason='length'" in str(error) and "max_tokens" in str(error)


# Answers in the right envelope with the wrong shapes inside: a protocol error naming the
# shape, never a crash of the reader (AttributeError, TypeError) that the page shows as such.
ODD_SHAPES = {
    "a choice that is a number": sse(b'{"choices": [1]}', b"[DONE]"),
    "a choice that is a list": sse(b'{"choices": [["' + SECRET + b'"]]}', b"[DONE]"),
    "choices that are an object": sse(b'{"choices": {"delta": {}}}', b"[DONE]"),
    "a delta that is text": sse(b'{"choices": [{"delta": "' + SECRET + b'"}]}', b"[DONE]"),
    "a content that is an object": sse(
        b'{"choices": [{"delta": {"content": {"x": "' + SECRET + b'"}}}]}', b"[DONE]"
    ),
    "a content that is a number": sse(b'{"choices": [{"delta": {"content": 7}}]}', b"[DONE]"),
}
WHOLE_ODD_SHAPES = {
    "a message content that is a number": whole(b'{"choices": [{"message": {"content": 7}}]}'),
    "a message content that is a list": whole(
        b'{"choices": [{"message": {"content": ["' + SECRET + b'"]}}]}'
    ),
}


@pytest.mark.parametrize("case", ODD_SHAPES)
async def test_a_streamed_answer_of_another_shape_is_a_protocol_error(case: str) -> None:
    error = await _error_of(ODD_SHAPES[case], streamed=True)
    assert isinstance(error, LLMProtocolError), repr(error)
    assert "hunter2" not in str(error), str(error)


@pytest.mark.parametrize("case", WHOLE_ODD_SHAPES)
async def test_a_whole_answer_of_another_shape_is_a_protocol_error(case: str) -> None:
    error = await _error_of(WHOLE_ODD_SHAPES[case], streamed=False)
    assert isinstance(error, LLMProtocolError), repr(error)
    assert "hunter2" not in str(error), str(error)


async def test_a_model_name_that_is_not_text_is_left_out() -> None:
    listener = Listener(
        answer=sse(b'{"model": {"x": 1}, "choices": [{"delta": {"content": "ok"}}]}', b"[DONE]")
    )
    try:
        config = loopback_config(f"http://127.0.0.1:{listener.port}/v1", model="m", timeout=5.0)
        chunks = [chunk async for chunk in stream_chat(config, HI)]
    finally:
        listener.close()
    assert chunks[-1].text == "ok" and chunks[-1].model is None
