"""A secret a tool's exception quotes never reaches the script: its name stands in for it.

A tool that raises becomes a failed response whose message is the exception's text, which the
script can print, emit or hand on (to the run's timeline and the LLM's next prompt). HTTP
libraries quote the URL they called, API key and all, and a script can make such a call fail
on purpose (a day that does not exist): the harness handed it the key. A script tool's errors
were already cut of its secrets (scripttools/adapter.py); a Python tool's were not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jazzmine.core.tools import SandboxConfig, ToolParameter, ToolRegistry, ToolResponse
from jazzmine.sandbox import RunRequest, SandboxBuilder
from jazzmine.sandbox.pool import WarmPool

from .helpers import collect, of_type

pytestmark = pytest.mark.docker

SANDBOX = "secret-in-errors"
TOOL_KEY = "tk-7f3a9c-reports"
SHARED_KEY = "sk-51e0d2-shared"


def fetch_report(day: str) -> ToolResponse:
    """Fetch a report; the HTTP library's error quotes the URL it called, with the key."""
    import os

    key, shared = os.environ.get("REPORTS_KEY"), os.environ.get("SHARED_KEY")
    url = f"https://reports.example.com/v1?day={day}&key={key}&account={shared}"
    raise RuntimeError(f"404 Client Error: Not Found for url: {url}")


def make_registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=SANDBOX, secrets=["SHARED_KEY"]))
    registry.register_function(fetch_report, description="Fetch a report.",
                               parameters=[ToolParameter("day", "str")], dependencies=[],
                               secrets=["REPORTS_KEY"], sandbox=SANDBOX)  # fmt: skip
    return registry


@pytest.fixture(scope="module")
def error_image(docker_client, tmp_path_factory: pytest.TempPathFactory) -> str:
    cache: Path = tmp_path_factory.mktemp("secret-in-errors")
    builder = SandboxBuilder(make_registry(), client=docker_client, cache_dir=cache)
    return builder.ensure_image(SANDBOX).tag


async def test_a_tools_error_names_its_secrets_instead_of_quoting_them(runner, error_image, limits):
    request = RunRequest.for_sandbox(
        "r = fetch_report('1999-02-31')\nemit_result(r.message)\n",
        declared_secrets=["SHARED_KEY", "REPORTS_KEY"],
        secret_store={"SHARED_KEY": SHARED_KEY, "REPORTS_KEY": TOOL_KEY},
        tool_secrets={"fetch_report": ["REPORTS_KEY"]},
    )
    async with WarmPool(runner, error_image, limits, size=1) as pool:
        events = await collect(pool.run(request))
    assert not any(TOOL_KEY in e.to_json() or SHARED_KEY in e.to_json() for e in events), events
    message = of_type(events, "result")[0].data
    assert message == (
        "Tool 'fetch_report' raised RuntimeError: 404 Client Error: Not Found for url: "
        "https://reports.example.com/v1?day=1999-02-31&key=[secret REPORTS_KEY]"
        "&account=[secret SHARED_KEY]"
    )


# A key of base64's alphabet, as an HTTP library's error spells it: percent-encoded in the
# query, with `+` for a space where a form encoder put one, escaped in a repr.
ENCODED_KEY = "k/7f+3a=9c reports"


def fetch_encoded(day: str) -> ToolResponse:
    """Fail quoting the key as URLs and reprs spell it."""
    import os
    import urllib.parse

    key = os.environ.get("REPORTS_KEY", "")
    raise RuntimeError(
        f"GET /v1/{urllib.parse.quote(key, safe='')}?key={urllib.parse.quote_plus(key)} "
        f"failed; params={{'key': {key!r}}}"
    )


def image_of(function, sandbox: str, docker_client, tmp_path_factory) -> str:
    """Return the image of a sandbox holding `function`, a tool with the secret REPORTS_KEY."""
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=sandbox))
    registry.register_function(function, description="Fetch a report.",
                               parameters=[ToolParameter("day", "str")], dependencies=[],
                               secrets=["REPORTS_KEY"], sandbox=sandbox)  # fmt: skip
    builder = SandboxBuilder(
        registry, client=docker_client, cache_dir=tmp_path_factory.mktemp(sandbox)
    )
    return builder.ensure_image(sandbox).tag


@pytest.fixture(scope="module")
def encoded_image(docker_client, tmp_path_factory: pytest.TempPathFactory) -> str:
    return image_of(fetch_encoded, "secret-encoded", docker_client, tmp_path_factory)


async def test_a_tools_error_names_its_secret_however_a_url_or_a_repr_spells_it(
    runner, encoded_image, limits
):
    request = RunRequest.for_sandbox(
        "r = fetch_encoded('x')\nemit_result(r.message)\n",
        declared_secrets=["REPORTS_KEY"],
        secret_store={"REPORTS_KEY": ENCODED_KEY},
        tool_secrets={"fetch_encoded": ["REPORTS_KEY"]},
    )
    async with WarmPool(runner, encoded_image, limits, size=1) as pool:
        events = await collect(pool.run(request))
    message = of_type(events, "result")[0].data
    assert message == (
        "Tool 'fetch_encoded' raised RuntimeError: GET /v1/[secret REPORTS_KEY]"
        "?key=[secret REPORTS_KEY] failed; params={'key': '[secret REPORTS_KEY]'}"
    ), message


def notify_caught(day: str) -> ToolResponse:
    """Catch the HTTP client's error and say it in a failed response, as tools often do."""
    import os
    import urllib.parse

    key = os.environ.get("REPORTS_KEY", "")
    error = f"POST /notify?token={urllib.parse.quote(key, safe='')} failed: 503"
    return ToolResponse(success=False, message=f"mail provider unreachable: {error}",
                        data={"day": day})  # fmt: skip


@pytest.fixture(scope="module")
def caught_image(docker_client, tmp_path_factory: pytest.TempPathFactory) -> str:
    return image_of(notify_caught, "secret-caught", docker_client, tmp_path_factory)


async def test_a_failed_response_that_quotes_its_secret_names_it_instead(
    runner, caught_image, limits
):
    # Raised, the same error had its key cut; caught and returned as a failed response's
    # message, it reached the script whole.
    request = RunRequest.for_sandbox(
        "r = notify_caught('O-1')\nemit_result([r.success, r.message, r.data])\n",
        declared_secrets=["REPORTS_KEY"],
        secret_store={"REPORTS_KEY": ENCODED_KEY},
        tool_secrets={"notify_caught": ["REPORTS_KEY"]},
    )
    async with WarmPool(runner, caught_image, limits, size=1) as pool:
        events = await collect(pool.run(request))
    assert not any("k%2F7f" in e.to_json() or ENCODED_KEY in e.to_json() for e in events), events
    assert of_type(events, "result")[0].data == [
        False,
        "mail provider unreachable: POST /notify?token=[secret REPORTS_KEY] failed: 503",
        {"day": "O-1"},
    ]
