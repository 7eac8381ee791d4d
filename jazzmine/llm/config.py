"""Where and how to call an OpenAI-compatible endpoint, checked when it is made."""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx

from jazzmine.net import OutboundPolicy

from .errors import LLMConfigError


def base_url_check(base_url: str) -> None:
    """Raise LLMConfigError unless the base URL ends where `/chat/completions` can follow it.

    The path is appended as text: after a `?` it is a query, after a `#` it is dropped, so
    `http://llm.lan/api/pull#` would post the chat request (the user's model name in it) to
    another endpoint of a host the deployment allowed for its LLM.
    """
    if "?" in base_url or "#" in base_url:
        raise LLMConfigError(
            f"LLM base URL {base_url!r} must not carry a query (?) or fragment (#): "
            "/chat/completions is appended to it, and after one of those the request would go "
            "to another path"
        )


@dataclass(frozen=True)
class LLMConfig:
    """Where and how to call the model.

    `timeout` bounds connecting and each wait for data; `total_timeout` the whole exchange, so
    an endpoint sending a byte every few seconds cannot hold the caller for as long as it likes.
    """

    base_url: str
    api_key: str | None = field(default=None, repr=False)
    model: str = ""
    timeout: float = 60.0
    temperature: float | None = None
    max_tokens: int | None = None
    # Hosts that may be reached although not public ("127.0.0.1:8765", "llm.lan").
    allowed_hosts: tuple[str, ...] = ()
    # Seconds one whole request may take, however its time was spent (`timeout`: each step).
    total_timeout: float = 600.0

    def __post_init__(self) -> None:
        try:
            url = httpx.URL(self.base_url) if "://" in self.base_url else None
            # `.host` decodes punycode: an A-label IDNA refuses (`xn--localhost`) is a
            # UnicodeError (a ValueError) here, not later in whatever reads the config.
            host = url.host if url is not None else ""
        except (httpx.InvalidURL, ValueError):
            url, host = None, ""
        if url is None or url.scheme not in ("http", "https") or not host:
            raise LLMConfigError(
                f"LLM base URL {self.base_url!r} must be an http(s) URL such as "
                "'http://localhost:11434/v1'"
            )
        base_url_check(self.base_url)
        # Where the URL leads is judged when a request is made (on the address connected to);
        # a stored URL that a deployment no longer allows fails there with a clear message.
        self.outbound  # noqa: B018 - parse the allowed hosts now, so a bad entry fails early
        if not self.model.strip():
            raise LLMConfigError("LLM model name is empty: set the model the endpoint serves")
        if self.timeout <= 0:
            raise LLMConfigError(f"LLM timeout must be positive, not {self.timeout}")
        if not self.total_timeout > 0:
            raise LLMConfigError(f"LLM total timeout must be positive, not {self.total_timeout}")

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
