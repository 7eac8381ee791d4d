"""Fixtures for playground tests: the run fixtures, plus a local LLM speaking the real protocol."""

from __future__ import annotations

import pytest

from jazzmine.llm.fake.server import FakeLLMServer
from jazzmine_web.catalog.management.commands.seed_demo import DEMO_ALWAYS_ALLOWED
from jazzmine_web.reviews.models import ReviewPolicy
from tests.web.helpers import allow_tools
from tests.web.reviews.conftest import set_policy


@pytest.fixture
async def llm(settings):
    """Serve a fake OpenAI-compatible endpoint and point the server's settings at it."""
    async with FakeLLMServer(token_delay=0.0) as server:
        settings.JAZZMINE_LLM_BASE_URL = server.base_url
        settings.JAZZMINE_LLM_MODEL = "jazzmine-fake"
        # A local model server is reachable only once the deployment allows it, as here.
        settings.JAZZMINE_OUTBOUND_ALLOWED_HOSTS = [f"{server.host}:{server.port}"]
        yield server


@pytest.fixture
def lookups(ecommerce):
    """Let scripts nobody read call the demo's lookups, as `seed_demo` does (Auto runs them)."""
    allow_tools(ecommerce, *DEMO_ALWAYS_ALLOWED)
    return ecommerce


@pytest.fixture
def trusted(ecommerce):
    """Make the sandbox one that never reviews: its automation (Auto) may call every tool."""
    set_policy(ecommerce, ReviewPolicy.NEVER)
    return ecommerce
