"""What goes to an LLM and what comes back: messages, text deltas, finishes, whole answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypedDict


class Message(TypedDict):
    """One chat message."""

    role: Literal["system", "user", "assistant"]
    content: str


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
