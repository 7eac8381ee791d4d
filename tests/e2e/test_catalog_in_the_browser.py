from __future__ import annotations

import re

import pytest

from .conftest import login
from .waiting import wait_until

pytestmark = pytest.mark.e2e


def test_a_user_logs_in_searches_the_catalog_and_reads_a_tools_xml_prompt(
    page, studio_server
) -> None:
    login(page, studio_server)
    page.click("nav >> text=Catalog")
    page.wait_for_url(re.compile(r"/catalog/"))
    assert page.locator("tr.tool-row").count() == 5

    page.fill("input[name=q]", "customer profile")
    # htmx swaps the results partial in place after the debounce.
    wait_until(page, "document.querySelectorAll('tr.tool-row').length === 1")
    assert "q=customer" in page.url

    page.click("tr.tool-row >> text=get_user")
    page.wait_for_url(re.compile(r"/catalog/tools/\d+/"))
    xml = page.locator("#tool-xml").inner_text()
    assert '<tool name="get_user">' in xml
    assert '<parameter name="user_id" type="str" required="True">' in xml
    assert "<display_name>Customer</display_name>" in xml
    assert page.locator("#tool-checksum").inner_text().strip()


def test_a_search_in_the_address_bar_shows_the_matching_tools(
    logged_in_page, studio_server
) -> None:
    page = logged_in_page
    page.goto(f"{studio_server.url}/catalog/?q=order")
    names = page.locator("tr.tool-row td:first-child code").all_inner_texts()
    assert sorted(n.strip() for n in names) == ["get_orders", "send_receipt", "update_order_status"]
    # The demo's lookup is always allowed (its badge says so); the changes are not.
    badges = page.locator("tr.tool-row td:first-child .badge").all_inner_texts()
    assert badges == ["auto"]


@pytest.mark.docker
def test_the_build_button_streams_the_image_build_log_live(logged_in_page, studio_server) -> None:
    page = logged_in_page
    page.click("#sandbox-ecommerce h2 a")
    page.wait_for_url(re.compile(r"/catalog/sandboxes/\d+/"))
    page.click("#image-status button[type=submit]")
    # The log arrives over ws/builds/<id>/ from the build the worker runs. The badge may read
    # "up to date" before the click's answer lands (the engine may hold the image already),
    # so wait for the build's own last line.
    wait_until(
        page,
        "(document.querySelector('#build-log')?.textContent || '').includes(' ready (')",
        timeout=240_000,
    )
    log = page.locator("#build-log").inner_text()
    assert "jazzmine/sandbox/" in log and "ready" in log
    wait_until(
        page, "document.querySelector('#image-status-badge').textContent.trim() === 'up to date'"
    )
    page.reload()
    assert page.locator("#image-status-badge").inner_text().strip() == "up to date"
