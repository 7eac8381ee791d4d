"""A refused form shows its error in place, styled, on the page it was sent from.

With debug on (`JAZZMINE_DEBUG=true`, as a developer runs it) and off: django-htmx's debug handler replaces the
whole page for 400 answers, and htmx swaps no 4xx answer by default.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.workers import free_port

from .conftest import StudioServer, login, serve

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def debug_server(studio_server: StudioServer) -> Iterator[StudioServer]:
    """Serve the same database from a second daphne with debug on."""
    port = free_port()
    server = StudioServer(
        url=f"http://127.0.0.1:{port}",
        env={**studio_server.env, "JAZZMINE_DEBUG": "true"},
        var_dir=studio_server.var_dir,
        database=studio_server.database,
        log_path=studio_server.var_dir / "daphne-debug.log",
    )
    with serve(server):
        yield server


@pytest.fixture(params=["debug off", "debug on"])
def server(request, studio_server: StudioServer) -> StudioServer:
    if request.param == "debug on":
        return request.getfixturevalue("debug_server")
    return studio_server


def open_sandbox(page, server: StudioServer) -> None:
    login(page, server)
    page.goto(f"{server.url}/")
    page.click("#sandbox-ecommerce a[href^='/catalog/sandboxes/']")
    page.wait_for_url(re.compile(r"/catalog/sandboxes/\d+/"))


def test_an_empty_secret_value_is_refused_inside_the_secrets_card(page, server) -> None:
    open_sandbox(page, server)
    row = page.locator("tr.secret").first
    row.locator("button:has-text('Set')").click()
    error = page.locator("#secrets p.error")
    error.wait_for()
    assert "value" in error.inner_text().lower()
    assert page.locator("header.topbar").count() == 1, "the page around the form is kept"
    assert page.locator("#secrets").count() == 1
    color = error.evaluate("e => getComputedStyle(e).color")
    assert color != "rgb(0, 0, 0)", "the error is styled"


def test_a_refused_import_keeps_the_page_and_names_the_problem(page, server, tmp_path) -> None:
    login(page, server)
    page.goto(f"{server.url}/catalog/import/")
    bad = tmp_path / "tools.py"
    bad.write_text(
        "from jazzmine.core.tools import tool\n\n"
        "@tool(description='Greets', shiny=True)\n"
        "def greet(name: str) -> str:\n    return name\n"
    )
    page.set_input_files("input[type=file]", str(bad))
    page.click("form button[type=submit]")
    page.wait_for_selector("#import-result .error, #import-result .problems, #import-result li")
    text = page.locator("#import-result").inner_text()
    assert "shiny" in text
    assert page.locator("header.topbar").count() == 1
    assert page.locator("input[type=file]").count() == 1, "the form is still there"
