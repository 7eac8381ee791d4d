"""A person creates a script tool in the browser, trial-runs it and publishes it."""

from __future__ import annotations

import re

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

DESCRIPTION = (
    "Compute the RSI momentum oscillator for a ticker. Use when the user asks whether a "
    "stock is overbought or oversold."
)


def test_a_script_tool_is_created_trial_run_and_published(logged_in_page, studio_server) -> None:
    page = logged_in_page
    # A sandbox of its own, so the demo catalog other tests count stays as it is.
    page.goto(f"{studio_server.url}/catalog/sandboxes/new/")
    page.select_option("select[name=team]", index=1)
    page.fill("input[name=name]", "quant-e2e")
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/catalog/sandboxes/\d+/$"))

    page.click("text=New script tool")
    page.wait_for_url(re.compile(r"/script-tools/new/$"))
    # The form comes with the spec's template: a schema and a script that honour the contract.
    assert '"symbol"' in page.input_value("textarea[name=parameters]")
    page.fill("input[name=name]", "calculate_rsi")
    page.fill("textarea[name=description]", DESCRIPTION)
    page.check("input[name=always_allow]")
    page.click("#script-tool-form button[type=submit]")
    page.wait_for_url(re.compile(r"/catalog/tools/\d+/$"))

    assert page.locator("#publish-state [data-published]").get_attribute("data-published") == "no"
    assert page.locator("#publish-button").is_disabled()
    assert page.locator(".lint-item").count() == 18
    # The trial form is generated from the schema and prefilled from examples and defaults.
    assert page.input_value("input[name=arg-symbol]") == "AAPL"
    assert page.input_value("input[name=arg-period]") == "14"
    page.fill("input[name=arg-period]", "9")

    page.click("#trial-button")
    # The trial runs in a worker; htmx polls its region until the result is in.
    page.wait_for_selector("[data-trial-status=valid_json]", timeout=120_000)
    stdout = page.locator(".trial-stdout").inner_text()
    assert '"symbol": "AAPL"' in stdout and '"period": 9' in stdout
    assert page.locator("[data-exit-code]").inner_text().strip() == "0"

    # The passed trial enables Publish (swapped in out of band with the result).
    page.wait_for_selector("#publish-button:not([disabled])")
    assert page.locator("#tool-published [data-published=no]").count() == 1
    page.click("#publish-button")
    page.wait_for_selector("#publish-state [data-published=yes]")
    # The header's badge is outside the region htmx swaps: the answer brings it out of band.
    page.wait_for_selector("#tool-published:empty", state="attached")
    page.click("#publish-state button:text('Withdraw')")
    page.wait_for_selector("#publish-state [data-published=no]")
    page.wait_for_selector("#tool-published [data-published=no]")
    assert "Withdrawn: not offered to LLMs." in page.locator("#publish-reason").inner_text()
    page.click("#publish-button")
    page.wait_for_selector("#tool-published:empty", state="attached")
    page.reload()
    assert page.locator("#publish-state [data-published]").get_attribute("data-published") == "yes"
    assert "calculate_rsi" in page.locator("#tool-xml").inner_text()
