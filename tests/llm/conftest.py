"""Fixtures: a fake LLM server on loopback, a client config for it, a generator with one tool."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator

import httpx
import pytest

from jazzmine.core.tools import SandboxConfig, ScriptGenerator, ToolParameter, ToolRegistry
from jazzmine.llm import LLMConfig
from jazzmine.llm.fake.server import DEFAULT_MODEL, FakeLLMServer

from . import shop_tools


@pytest.fixture
async def server() -> AsyncIterator[FakeLLMServer]:
    async with FakeLLMServer() as running:
        yield running


def loopback_config(base_url: str, **kwargs: object) -> LLMConfig:
    """Return a config for a server on loopback, its host:port allowed as a deployment would."""
    return LLMConfig(base_url, allowed_hosts=(httpx.URL(base_url).netloc.decode(),), **kwargs)


@pytest.fixture
def config(server: FakeLLMServer) -> LLMConfig:
    return loopback_config(server.base_url, model=DEFAULT_MODEL, timeout=5.0)


@pytest.fixture
def closed_port() -> int:
    """Return a loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def generator() -> ScriptGenerator:
    reg = ToolRegistry()
    reg.register_sandbox(SandboxConfig(name="shop"))
    reg.tool(
        description="Fetch the orders of a user.",
        parameters=[ToolParameter("user_id", "str", "The user's id", required=True)],
        sandbox="shop",
    )(shop_tools.get_orders)
    return ScriptGenerator(reg)
