"""The sandbox page in Chromium during a real build: the log keeps to its newest line unless the
reader scrolls up, and the Build button comes back by itself when the build ends."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import docker
import pytest

from .conftest import login
from .waiting import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

# A sandbox whose code no image exists for yet, so Build really builds (and logs) one.
MAKE_SANDBOX = """
from jazzmine_web.catalog.models import Sandbox
from jazzmine_web.catalog.services import sandbox_create, sandbox_image_key, tool_create
sandbox = sandbox_create(team=Sandbox.objects.get(name="ecommerce").team, name=NAME)
tool_create(sandbox=sandbox, name="ping", description="Answer pong",
            source="def ping() -> ToolResponse:\\n    return ToolResponse(success=True, data=MARK)\\n")
print(sandbox.pk, sandbox_image_key(sandbox))
"""

AT_BOTTOM = "el => el.scrollHeight - el.scrollTop - el.clientHeight <= 2"
# Lines arrive as htmx out-of-band appends; add some the same way and let a frame pass.
APPEND = """async (el) => {
  for (let i = 0; i < 8; i++) el.insertAdjacentHTML('beforeend', `<span class="log-line">extra ${i}\\n</span>`);
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return el.scrollTop;
}"""
SCROLL_TO = """async ([el, top]) => {
  el.scrollTop = top;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
}"""


@pytest.fixture
def fresh_sandbox(studio_server) -> Iterator[int]:
    name = "follow-" + uuid.uuid4().hex[:8]
    code = MAKE_SANDBOX.replace("NAME", repr(name)).replace("MARK", repr(uuid.uuid4().hex))
    pk, key = studio_server.manage("shell", "-c", code).strip().splitlines()[-1].split()
    pk = int(pk)
    yield pk
    # The server is shared with other browser tests: leave its catalog as the demo made it.
    studio_server.manage(
        "shell",
        "-c",
        f"from jazzmine_web.catalog.models import Sandbox; Sandbox.objects.filter(pk={pk}).delete()",
    )
    client = docker.from_env()
    repository = f"jazzmine/sandbox/{key}"  # a sandbox's images are filed under its key
    for image in client.images.list(name=repository):
        for tag in image.tags:
            if tag.startswith(repository + ":"):  # never the shared base image's own tag
                client.images.remove(tag)
    client.close()


def test_the_log_follows_its_tail_and_build_comes_back_when_it_ends(
    page, studio_server, fresh_sandbox
) -> None:
    login(page, studio_server)
    page.goto(f"{studio_server.url}/catalog/sandboxes/{fresh_sandbox}/")
    # A short log box, so a few lines overflow it: the behaviour, not the stylesheet's size.
    # Through the CSSOM: the page's policy refuses an added <style>, as it would its own.
    page.evaluate(
        "document.styleSheets[0].insertRule('.build-log { max-height: 60px !important; }')"
    )
    button = page.locator("#build-button")
    assert button.is_enabled()
    page.click("#build-button")
    page.wait_for_selector("#build-button[disabled]")
    wait_until(
        page, "document.querySelectorAll('#build-log .log-line').length >= 3", timeout=240_000
    )
    # The build ends (success or failure): the button comes back without a reload.
    page.wait_for_selector("#build-button:not([disabled])", timeout=240_000)
    badge = page.locator("#image-status-badge").inner_text().strip()
    assert badge in ("up to date", "failed")
    assert re.search(r"(ready|ERROR)", page.locator("#build-log").inner_text())

    log = page.locator("#build-log")
    assert log.evaluate("el => el.scrollHeight > el.clientHeight"), "the log overflows"
    assert log.evaluate(AT_BOTTOM), "it kept to the newest line while the build streamed"

    # The reader scrolls up: new lines no longer pull the view down.
    page.evaluate(SCROLL_TO, [log.element_handle(), 0])
    assert log.evaluate(APPEND) == 0
    # Back at the bottom: it follows again.
    page.evaluate(SCROLL_TO, [log.element_handle(), 10**6])
    log.evaluate(APPEND)
    assert log.evaluate(AT_BOTTOM)

    # It really works again: a second build finds the image and ends, and Build comes back.
    button.click()
    wait_until(
        page,
        "document.querySelector('#build-log').textContent.includes('is up to date')",
        timeout=60_000,
    )
    page.wait_for_selector("#build-button:not([disabled])")
