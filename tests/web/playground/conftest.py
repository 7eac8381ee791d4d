"""Fixtures for playground tests: the run fixtures, plus a local LLM speaking the real protocol."""

from __future__ import annotations

import pytest

from jazzmine.llm.fake.server import FakeLLMServer


@pytest.fixture
async def llm(settings):
    """Serve a fake OpenAI-compatible endpoint and point the server's settings at it."""
    async with FakeLLMServer(token_delay=0.0) as server:
        settings.JAZZMINE_LLM_BASE_URL = server.base_url
        settings.JAZZMINE_LLM_MODEL = "jazzmine-fake"
        # A local model server is reachable only once the deployment allows it, as here.
        settings.JAZZMINE_OUTBOUND_ALLOWED_HOSTS = [f"{server.host}:{server.port}"]
        yield server
