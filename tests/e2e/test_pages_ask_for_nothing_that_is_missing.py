"""Every request a page makes on its own (styles, scripts, its icon) is answered, on the studio's
pages and the admin's: a 404 there is a console error a person sees on every page. (Chromium's
own request for /favicon.ico, from pages that name no icon, is not a page event: its redirect
is tested in tests/web/test_home.py.)"""

from __future__ import annotations

import pytest

from .conftest import login

pytestmark = [pytest.mark.e2e]


def test_the_login_home_and_admin_pages_load_everything_they_ask_for(
    browser, studio_server
) -> None:
    # A context of its own: a page shared with other tests may have its icon cached already.
    context = browser.new_context(base_url=studio_server.url)
    page = context.new_page()
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("requestfailed", lambda r: failed.append(f"failed {r.url}"))
    icons: list[str] = []
    page.on("response", lambda r: icons.append(r.url) if "favicon" in r.url else None)
    try:
        page.goto("/login/", wait_until="networkidle")
        login(page, studio_server)
        page.wait_for_load_state("networkidle")
        page.goto(
            "/admin/", wait_until="networkidle"
        )  # names no icon: the browser asks /favicon.ico
    finally:
        context.close()
    assert failed == []
    assert any(url.endswith("/static/studio/favicon.svg") for url in icons), icons
