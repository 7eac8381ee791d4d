"""A script tool's error message never carries the values of the secrets it was handed.

The message is the script's stderr, word for word: an HTTP library's error quotes the URL it
called, API key and all. It reaches the LLM (a retry's prompt quotes the run's error), the
run's timeline (each bash call's error, the run's stderr), and, in a Python run, the script,
which can hand it to any other tool: another tool's way to read this tool's own secret.
"""

from __future__ import annotations

import pytest

from jazzmine.bash import specs_for_sandbox
from jazzmine.bash.sandbox import run_bash_in_sandbox
from jazzmine.core.tools import SandboxConfig, ToolRegistry, ToolResponse
from jazzmine.sandbox import SandboxBuilder
from jazzmine.scripttools import ScriptTool, function_source, register_script_tool

KEY = "wk-7c0ffee5ecret"
TOKEN = "kc-0123456789abcdef"
FAILS_QUOTING_ITS_KEY = """
import os, sys
url = "https://api.example.com/v1/weather?city=Paris&key=" + os.environ["WEATHER_KEY"]
sys.stderr.write("HTTPError: 401 Client Error: Unauthorized for url: " + url + "\\n")
sys.stderr.write("token: " + os.environ.get("JAZZMINE_KEYCHAIN_TOKEN", "") + "\\n")
sys.exit(1)
"""
WEATHER = ScriptTool(
    name="fetch_weather",
    description="Fetch the weather of a city",
    source=FAILS_QUOTING_ITS_KEY,
    secrets=["WEATHER_KEY"],
)


def compiled(tool: ScriptTool):
    namespace = {"ToolResponse": ToolResponse}
    exec(function_source(tool), namespace)
    return namespace[tool.name]


def test_the_message_names_the_secret_instead_of_quoting_its_value(monkeypatch):
    monkeypatch.setenv("WEATHER_KEY", KEY)
    monkeypatch.setenv("JAZZMINE_KEYCHAIN_TOKEN_fetch_weather", TOKEN)
    response = compiled(WEATHER)()
    assert not response.success
    assert KEY not in response.message and TOKEN not in response.message
    assert "Unauthorized for url: https://api.example.com/v1/weather?city=Paris&key=" in (
        response.message
    )
    assert "[secret WEATHER_KEY]" in response.message
    assert "[secret JAZZMINE_KEYCHAIN_TOKEN]" in response.message


def test_a_value_too_short_to_be_a_key_is_left_as_it_is(monkeypatch):
    monkeypatch.setenv("WEATHER_KEY", "1")
    response = compiled(WEATHER)()
    assert "&key=1\n" in response.message and "[secret" not in response.message


@pytest.mark.docker
async def test_a_bash_run_shows_the_error_without_the_secret(docker_client, base_image, tmp_path):
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name="weather"))
    register_script_tool(registry, WEATHER, sandbox="weather")
    builder = SandboxBuilder(registry, client=docker_client, cache_dir=tmp_path)
    try:
        image = builder.ensure_image("weather").tag
        seen = []
        specs = specs_for_sandbox(registry, "weather", script_tools=[WEATHER])
        result = await run_bash_in_sandbox(
            "fetch_weather || echo failed\n",
            sandbox_image=image, specs=specs,
            client=docker_client, on_call=seen.append,
            secrets={"WEATHER_KEY": KEY}, tool_secrets=registry.tool_only_secrets("weather"),
        )  # fmt: skip
        assert result.stdout == "failed\n", result
        assert "Unauthorized for url" in result.stderr and "[secret WEATHER_KEY]" in result.stderr
        assert KEY not in repr(result) and KEY not in repr(seen)
    finally:
        builder.prune("weather", keep=0)  # this test's images, and the bash images on them
