"""The playground in a real Chromium against a real daphne and a real Docker engine."""

from __future__ import annotations

import pytest

from .waiting import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

SLOW_SCRIPT = """\
for i in range(4):
    emit_intermediate("step", {"i": i})
    time.sleep(0.4)
emit_log("all steps done")
emit_result({"steps": 4})
"""


def open_playground(page) -> None:
    page.goto("/playground/")
    page.wait_for_selector("#playground[data-socket=open]")


def type_script(page, text: str) -> None:
    editor = page.locator("#script-body")
    editor.fill("")
    editor.press_sequentially(text, delay=5)


def run_until_its_first_step(page, task: str, script: str) -> None:
    """Run a script from a fresh playground and wait for its first intermediate event."""
    open_playground(page)
    page.locator("#task").fill(task)
    page.locator("#script-body").fill(script)
    wait_until(page, "!document.querySelector('#run-button').disabled")
    page.click("#run-button")
    page.locator("[data-run-timeline] li.intermediate").first.wait_for(timeout=60_000)


def test_a_forbidden_call_is_marked_on_its_line_and_cleared_when_fixed(logged_in_page) -> None:
    page = logged_in_page
    open_playground(page)
    type_script(
        page, "orders = get_orders()\nsecret = open('/etc/passwd')\nemit_result(orders.data)"
    )
    # Typing passes through broken intermediate states; wait for the answer to the final text.
    wait_until(
        page,
        "document.querySelector('#violations').innerText.includes(\"call to 'open' is forbidden\")",
    )
    marked = page.locator(".editor-gutter .line.violation")
    assert marked.count() == 1 and marked.get_attribute("data-line") == "2"
    assert page.locator("#run-button").is_disabled()

    page.locator("#script-body").fill("orders = get_orders()\nemit_result(orders.data)")
    wait_until(page, "document.querySelectorAll('.editor-gutter .violation').length === 0")
    assert page.locator("#violations li").count() == 0
    wait_until(page, "!document.querySelector('#run-button').disabled")


def test_a_run_streams_its_timeline_and_result_and_survives_a_reload(logged_in_page) -> None:
    page = logged_in_page
    run_until_its_first_step(page, "Count to four slowly", SLOW_SCRIPT)

    page.reload()  # mid-run: the page must pick the run up where it was
    page.locator("[data-run-result]:not([hidden])").wait_for(timeout=60_000)
    steps = page.locator("[data-run-timeline] li.intermediate")
    assert steps.count() == 4
    seqs = [
        int(s)
        for s in page.eval_on_selector_all(
            "[data-run-timeline] li", "els => els.map(e => e.dataset.seq)"
        )
    ]
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs)), "nothing missing, nothing twice"
    assert '"steps": 4' in page.locator("[data-run-result-body]").inner_text()
    assert "all steps done" in page.locator("[data-run-logs]").inner_text()
    page.wait_for_selector("[data-run-status].status-succeeded")
    assert page.locator("#attempt-list tr[data-attempt]").count() >= 1


LONG_SCRIPT = """\
for i in range(120):
    emit_intermediate("tick", {"i": i})
    time.sleep(0.5)
emit_result({"done": True})
"""


def test_a_page_reloaded_mid_run_is_busy_cancels_it_and_follows_its_end(logged_in_page) -> None:
    """Reloaded mid-run, the page offered Run and Generate beside a run still going, hid
    Cancel, and left the attempt 'running' after the run ended."""
    page = logged_in_page
    run_until_its_first_step(page, "Tick for a minute", LONG_SCRIPT)

    page.reload()
    page.wait_for_selector("#playground[data-socket=open]")
    assert page.locator("#cancel-button").is_visible()
    assert page.locator("#run-button").is_disabled() and page.locator("#auto-button").is_disabled()
    assert "running" in page.locator("#playground-status").inner_text()

    page.click("#cancel-button")
    # Stopped, not failed: its badge reads Cancelled (the run's status is `failed`).
    page.wait_for_selector("[data-run-status][data-status=failed].status-cancelled", timeout=30_000)
    assert page.locator("[data-run-status]").inner_text() == "Cancelled"
    wait_until(page, "document.querySelector('#cancel-button').hidden")
    wait_until(page, "!document.querySelector('#run-button').disabled")
    assert "run cancelled" in page.locator("#playground-status").inner_text()
    wait_until(page, "!document.querySelector('#attempt-list').innerText.includes('running')")
    assert page.locator("[data-run-timeline] li.intermediate").count() < 120


# Dense code highlights to ~15 bytes of markup a character: the editor's answer for a 150 KB
# paste was 2.3 MB, over the 1 MiB a socket frame holds in daphne. It was never sent, and Run
# stayed disabled for good. Past a size the editor keeps the plain text it shows.
DENSE = "".join(f"a{i} = [1, 2, 3, 4, 5, 6, 7, 8, 9, 0]\n" for i in range(4000)) + (
    "emit_result(len(a0) + len(a3999))\n"
)


def test_a_big_dense_paste_is_checked_and_runs_twice(logged_in_page) -> None:
    page = logged_in_page
    open_playground(page)
    assert len(DENSE) > 150_000
    for _ in range(2):  # and again after a reload
        # As a paste lands: the whole text in one input event (typing it would take minutes).
        page.locator("#script-body").evaluate(
            "(e, text) => { e.value = text; e.dispatchEvent(new Event('input')); }", DENSE
        )
        wait_until(page, "!document.querySelector('#run-button').disabled", timeout=60_000)
        assert page.locator("#violations li").count() == 0
        assert "a3999" in page.locator(".editor-overlay").inner_text()  # the plain text shows
        page.click("#run-button")
        page.wait_for_selector("[data-run-status].status-succeeded", timeout=60_000)
        assert "20" in page.locator("[data-run-result-body]").inner_text()
        page.reload()
        page.wait_for_selector("#playground[data-socket=open]")


def test_a_script_past_what_the_playground_runs_is_said_and_never_sent(logged_in_page) -> None:
    # 1.1 MB in one frame: the server dropped the socket without a word, and the page sent
    # the same frame again on every reconnect, its buttons greyed out, saying nothing.
    page = logged_in_page
    open_playground(page)
    page.locator("#script-body").fill("# " + "a" * 1_100_000 + "\nemit_result(1)\n")
    wait_until(
        page,
        "document.querySelector('#violations').innerText.includes('runs scripts of at most 200,000')",
    )
    page.wait_for_timeout(1500)  # a dropped socket would have said so by now
    assert page.locator("#playground").get_attribute("data-socket") == "open"
    assert page.locator("#run-button").is_disabled()
    # Cut back to size, it is checked by the server again and runs.
    page.locator("#script-body").fill("emit_result(1)\n")
    wait_until(page, "!document.querySelector('#run-button').disabled")
    assert page.locator("#violations li").count() == 0


def test_a_playground_signed_out_elsewhere_says_so(logged_in_page) -> None:
    # Signed out in another tab, the page kept its buttons grey and said nothing: the only
    # trace was an attribute.
    page = logged_in_page
    open_playground(page)
    assert page.locator("#playground-connection").inner_text() == ""
    other = page.context.new_page()
    other.goto(page.url)
    other.locator("form[action='/logout/'] button").click()
    other.wait_for_url("**/login/**")
    # The socket finds it out at a message (it looks again every few seconds): edits send one.
    for n in range(30):
        page.locator("#script-body").fill(f"emit_result({n})\n")
        if page.locator("#playground").get_attribute("data-socket") == "refused":
            break
        page.wait_for_timeout(500)
    assert page.locator("#playground").get_attribute("data-socket") == "refused"
    assert "reload it to sign in again" in page.locator("#playground-connection").inner_text()
