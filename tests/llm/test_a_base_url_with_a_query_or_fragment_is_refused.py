"""A base URL cannot aim the chat request at another path of its host.

`/chat/completions` is appended to the base URL as text: after a `?` it is a query, after a `#`
it is dropped, so `http://127.0.0.1:11434/api/pull#` posted `{"model": <the user's>, ...}` to
Ollama's model-pull endpoint on a host the deployment allowed for its LLM.
"""

from __future__ import annotations

import pytest

from jazzmine.llm import LLMConfig, LLMConfigError, complete

from .conftest import loopback_config
from .listener import Listener


@pytest.mark.parametrize(
    "tail", ["/api/pull#", "/api/pull?x=", "/v1/../api/pull?", "/v1?", "/v1#frag", "/v1/?a=b"]
)
async def test_the_request_never_reaches_another_path(tail: str) -> None:
    listener = Listener()
    try:
        with pytest.raises(LLMConfigError, match=r"query \(\?\) or fragment \(#\)"):
            config = loopback_config(f"http://127.0.0.1:{listener.port}{tail}", model="m")
            await complete(config, [{"role": "user", "content": "hi"}])
    finally:
        listener.close()
    assert listener.accepted == 0


@pytest.mark.parametrize(
    "url", ["https://api.example.com/v1", "https://api.example.com/openai/v1/", "http://h:8/"]
)
def test_a_base_url_with_a_path_only_passes(url: str) -> None:
    assert LLMConfig(url, model="m").chat_url.endswith("/chat/completions")
