"""Talking to LLMs: a client for OpenAI-compatible endpoints and a local fake for tests."""

from __future__ import annotations

from .client import complete, list_models, stream_chat
from .config import LLMConfig
from .errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMConfigError,
    LLMConnectionError,
    LLMEmptyAnswerError,
    LLMError,
    LLMNotFoundError,
    LLMProtocolError,
    LLMRateLimitError,
    LLMServerError,
    LLMTimeoutError,
)
from .types import Chunk, Completion, Finish, Message, TextDelta, Usage

__all__ = [
    "Chunk",
    "Completion",
    "Finish",
    "LLMAuthError",
    "LLMBadRequestError",
    "LLMConfig",
    "LLMConfigError",
    "LLMConnectionError",
    "LLMEmptyAnswerError",
    "LLMError",
    "LLMNotFoundError",
    "LLMProtocolError",
    "LLMRateLimitError",
    "LLMServerError",
    "LLMTimeoutError",
    "Message",
    "TextDelta",
    "Usage",
    "complete",
    "list_models",
    "stream_chat",
]
