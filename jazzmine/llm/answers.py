"""Read an endpoint's answer bodies: JSON, usage, a whole answer, or why it is empty."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from jazzmine.jsontext import JSONTextError, json_read

from .errors import LLMEmptyAnswerError, LLMProtocolError
from .types import Chunk, Completion, Finish, TextDelta, Usage

# The finish reasons of the OpenAI API; an endpoint may send anything else.
_FINISH_REASONS = frozenset({"stop", "length", "content_filter", "tool_calls", "function_call"})


def whole_answer(url: str, body: Any) -> Completion:
    """Read a non-streamed answer's body: its first choice's text, why it stopped, its usage."""
    try:
        choice = body["choices"][0]
        text = choice["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        raise LLMProtocolError(f"{url} answered without choices[0].message", url=url) from None
    if not isinstance(text, str):
        raise LLMProtocolError(f"{url} answered with a message content that is not text", url=url)
    finish_reason = choice.get("finish_reason")
    if not text.strip():
        raise empty_answer_error(url, finish_reason)
    return Completion(
        text=text,
        finish_reason=finish_reason,
        usage=parse_usage(body.get("usage")),
        model=model_name(body),
    )


def model_name(event: Mapping[str, Any]) -> str | None:
    """Return the answer's model name when it is one (any JSON value may stand there)."""
    model = event.get("model")
    return model if isinstance(model, str) and model else None


def stream_choice(url: str, choice: Any) -> tuple[str, Any]:
    """Return one streamed choice's text delta and finish reason; refuse any other shape."""
    delta = choice.get("delta") if isinstance(choice, Mapping) else None
    if not isinstance(choice, Mapping) or not isinstance(delta, Mapping | None):
        raise LLMProtocolError(f"{url} streamed a choice without a delta object", url=url)
    text = (delta or {}).get("content")
    if not isinstance(text, str | None):
        raise LLMProtocolError(f"{url} streamed a delta content that is not text", url=url)
    return text or "", choice.get("finish_reason")


async def chunks_from_whole(url: str, body: Any) -> AsyncIterator[Chunk]:
    """Turn a non-streamed answer into the same chunks a stream would give."""
    answer = whole_answer(url, body)
    yield TextDelta(answer.text)
    yield Finish(
        text=answer.text,
        finish_reason=answer.finish_reason,
        usage=answer.usage,
        model=answer.model,
    )


def parse_json(url: str, text: str) -> Any:
    """Parse JSON from the endpoint or say what came instead."""
    try:
        return json_read(text)
    except JSONTextError:
        # JSONTextError, not ValueError: deep nesting is a RecursionError.
        raise LLMProtocolError(
            f"{url} sent something that is not JSON (its text is not shown)", url=url
        ) from None


def parse_usage(data: Any) -> Usage | None:
    """Return usage from an endpoint's `usage` object, if it has any counts."""
    if not isinstance(data, Mapping):
        return None

    def count(key: str) -> int | None:
        value = data.get(key)
        return value if isinstance(value, int) else None

    usage = Usage(count("prompt_tokens"), count("completion_tokens"), count("total_tokens"))
    return usage if usage != Usage() else None


def empty_answer_error(url: str, finish_reason: str | None) -> LLMEmptyAnswerError:
    """Return the error for an answer without text, with the likely reason."""
    # finish_reason is the endpoint's (any JSON value): shown only when it is an OpenAI one.
    known = finish_reason if isinstance(finish_reason, str) else None
    if known not in _FINISH_REASONS:
        known = None
    why = {
        "length": " (it hit max_tokens before writing anything)",
        "content_filter": " (its content filter stopped it)",
    }.get(known or "", "")
    shown = repr(known) if known or finish_reason is None else "not a standard value"
    return LLMEmptyAnswerError(
        f"{url} returned an empty answer{why}; finish_reason={shown}",
        url=url,
        finish_reason=finish_reason,
    )
