"""The errors of the LLM client: each says what kept the model from answering."""

from __future__ import annotations


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
