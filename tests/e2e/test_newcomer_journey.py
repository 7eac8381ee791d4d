"""A newcomer's first hour, as the README tells it, in a real Chromium.

One story, in order: `demo` logs in, browses the catalog and a tool's XML prompt, edits the
tool's code and reads the version diff, generates a script with the local LLM stand-in, runs it,
sees it fail, retries, lets Auto loop, compares attempts, switches to bash for a jq pipeline,
creates an API token and submits as an agent; `reviewer`, in another browser profile, edits
and approves one submission, watches its run, rejects another with feedback and reads the
audit trail; then `demo` goes round the generate → run → retry loop again in the same session,
and once more after a reload.

Everything is found by role, label or visible text where the page offers one, and every wait
is on something the newcomer would see, so the story fails at the step that breaks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from playwright.sync_api import Locator, Page, WebSocket, expect

from jazzmine.agent_client import AgentClient

from .conftest import DEMO_PASSWORD, FakeLLM, StudioServer, browser_page, login

pytestmark = [pytest.mark.e2e, pytest.mark.docker, pytest.mark.timeout(900)]

REVIEWER = "reviewer"
REVIEWER_PASSWORD = "jazzmine-review"
# How long a step may take to show on a busy machine (Playwright's default is 5 s).
STEP_TIMEOUT = 20_000
# The first run after the tool edit builds the sandbox image; later runs take a second.
RUN_TIMEOUT = 240_000
# The stand-in answers a task that mentions "first" with the classic `r.data[0]` mistake on
# attempt 1 and with the fix once the retry prompt quotes the KeyError (README, Run it).
TASK = "Show the first of the recent orders"
FIRST_ORDER = "ORD-1001"
EDITED_LINE = "    # The provider's token reaches the sandbox as an environment variable."
JQ_PIPELINE = "get_orders --status delivered | jq '[.orders[].price] | add'\n"
AGENT_BODY = """\
orders = get_orders(status="delivered")
emit_result({"total": sum(o["price"] for o in orders.data["orders"])})
"""
REVIEWED_BODY = """\
orders = get_orders(status="delivered")
for o in orders.data["orders"]:
    emit_intermediate("order", {"id": o["id"], "price": o["price"]})
emit_result({"total": sum(o["price"] for o in orders.data["orders"]), "reviewed": True})
"""
FEEDBACK = "Count every order, not only the delivered ones."


@dataclass
class PlaygroundSockets:
    """Watch the playground's websocket: the retry loop once broke by dropping it."""

    opened: list[WebSocket] = field(default_factory=list)
    mark: int = 0

    def watch(self, page: Page) -> None:
        page.on("websocket", self._seen)

    def _seen(self, socket: WebSocket) -> None:
        if "/ws/playground/" in socket.url:
            self.opened.append(socket)

    def page_loading(self) -> None:
        """Note a navigation to come: it closes the previous page's socket on purpose."""
        self.mark = len(self.opened)

    def assert_held(self) -> None:
        """Fail when this page load's playground socket closed and had to reconnect."""
        since = self.opened[self.mark :]
        assert len(since) == 1 and not since[0].is_closed(), (
            f"the playground socket dropped: {len(since)} opened since the page loaded, "
            f"{sum(s.is_closed() for s in since)} closed"
        )


# --- demo: catalog ---------------------------------------------------------------------------


def nav(page: Page, name: str) -> None:
    # A link's name may carry a live count after it ("Reviews 2").
    link = re.compile(rf"^{re.escape(name)}(\s|$)")
    page.get_by_role("navigation").get_by_role("link", name=link).click()


def browse_catalog_and_read_the_xml_prompt(page: Page) -> None:
    nav(page, "Catalog")
    expect(page.get_by_role("heading", name="Tool catalog")).to_be_visible()
    page.get_by_role("searchbox", name="Search tools").fill("customer profile")
    expect(page.get_by_role("link", name="get_orders", exact=True)).to_be_hidden()
    page.get_by_role("link", name="get_user", exact=True).click()
    expect(page.get_by_role("heading", name="get_user")).to_be_visible()
    xml = page.locator("section").filter(
        has=page.get_by_role("heading", name="The XML the LLM reads")
    )
    expect(xml).to_contain_text('<tool name="get_user">')
    expect(xml).to_contain_text("<display_name>Customer</display_name>")


def edit_a_tools_code_and_read_its_version_diff(page: Page) -> None:
    nav(page, "Catalog")
    page.get_by_role("link", name="send_receipt", exact=True).click()
    page.get_by_role("link", name="Edit", exact=True).click()
    # The label wraps the textarea, so its name goes on with the code: match its start.
    source = page.get_by_label(re.compile(r"^Source"))
    code = source.input_value()
    assert "    import os\n" in code
    source.fill(code.replace("    import os\n", f"    import os\n{EDITED_LINE}\n", 1))
    page.get_by_label("Note").fill("Say where the mail token comes from")
    page.get_by_role("button", name="Save").click()

    expect(page.get_by_text(re.compile(r"Saved send_receipt as v2\b"))).to_be_visible()
    versions = page.locator("section").filter(has=page.get_by_role("heading", name="Versions"))
    v2 = versions.get_by_role("row").filter(has_text="v2")
    expect(v2).to_contain_text("Say where the mail token comes from")
    v2.get_by_role("button", name="Diff").click()
    diff = versions.locator("#version-diff")
    expect(diff).to_contain_text(re.compile(r"v2 against"))
    expect(diff).to_contain_text(f"+{EDITED_LINE}")


# --- demo: playground ------------------------------------------------------------------------


def open_playground(page: Page, sockets: PlaygroundSockets, url: str | None = None) -> None:
    sockets.page_loading()
    if url is None:
        nav(page, "Playground")
    else:
        page.goto(url)
    expect(page.get_by_role("button", name="Generate")).to_be_enabled()


def reload_playground(page: Page, sockets: PlaygroundSockets) -> None:
    sockets.page_loading()
    page.reload()
    expect(page.get_by_role("button", name="Generate")).to_be_enabled()


def attempt_rows(page: Page) -> Locator:
    return page.locator("#attempt-list tbody").get_by_role("row")


def editor(page: Page) -> Locator:
    return page.locator("#script-body")


def run_pane(page: Page) -> Locator:
    return page.locator("#run-output-slot [data-run-output]")


def status_line(page: Page) -> Locator:
    return page.locator("#playground-status")


def generate(page: Page, button: str) -> str:
    """Press Generate or Retry; wait for the streamed script to land and be checked."""
    before = attempt_rows(page).count()
    page.get_by_role("button", name=button, exact=True).click()
    expect(status_line(page)).to_have_text(re.compile(r"attempt \d+ generated in"))
    expect(attempt_rows(page)).to_have_count(before + 1)
    expect(page.get_by_role("button", name="Run", exact=True)).to_be_enabled()
    return editor(page).input_value()


def run_and_watch(page: Page, expected: str) -> Locator:
    """Press Run and watch a new run stream to its end; return its output pane."""
    previous = run_pane(page).locator("[data-run-link]")
    old_link = previous.inner_text() if previous.count() else ""
    page.get_by_role("button", name="Run", exact=True).click()
    pane = run_pane(page)
    expect(pane.locator("[data-run-link]")).not_to_have_text(old_link or "(none)")
    expect(pane.locator("[data-run-status]")).to_have_text(
        re.compile("succeeded|failed", re.I), timeout=RUN_TIMEOUT
    )
    expect(pane.locator("[data-run-status]")).to_have_text(re.compile(expected, re.I))
    return pane


def ask_for_a_script_that_makes_the_classic_mistake(page: Page) -> None:
    script = generate(page, "Generate")
    assert "r.data[0]" in script, script


def run_it_and_see_it_fail(page: Page) -> None:
    pane = run_and_watch(page, "failed")
    expect(pane.locator("[data-run-error]")).to_contain_text("KeyError")


def retry_and_run_the_fix(page: Page) -> None:
    script = generate(page, "Retry")
    assert "r.data[0]" not in script, script
    pane = run_and_watch(page, "succeeded")
    expect(pane.locator("[data-run-result]")).to_contain_text(FIRST_ORDER)
    # Run again, unedited: still the LLM's script (it was recorded as a person's).
    before = attempt_rows(page).count()
    run_and_watch(page, "succeeded")
    expect(attempt_rows(page)).to_have_count(before + 1)
    newest = page.locator(f"#attempt-list tbody tr[data-attempt='{before + 1}']")
    expect(newest).to_contain_text("Generated by the LLM")


def go_round_the_retry_loop(page: Page, sockets: PlaygroundSockets) -> None:
    """The loop the README demonstrates: KeyError on attempt 1, the fix on the retry."""
    ask_for_a_script_that_makes_the_classic_mistake(page)
    run_it_and_see_it_fail(page)
    retry_and_run_the_fix(page)
    sockets.assert_held()


def see_the_retry_prompt_with_the_keyerror_hint(page: Page) -> None:
    page.get_by_label("Show the retry form of the next attempt").check()
    expect(page.get_by_text(re.compile(r"Retry prompt for attempt \d+"))).to_be_visible()
    expect(page.get_by_text("Injected hint:")).to_be_visible()
    expect(page.locator("#prompt-panel")).to_contain_text("KeyError")
    page.get_by_label("Show the retry form of the next attempt").uncheck()


def let_auto_loop_until_it_succeeds(page: Page, sockets: PlaygroundSockets) -> None:
    before = attempt_rows(page).count()
    page.get_by_role("button", name="Auto", exact=True).click()
    expect(status_line(page)).to_have_text(
        re.compile(r"succeeded after \d+ attempt"), timeout=RUN_TIMEOUT
    )
    # From a fresh first prompt the stand-in makes the mistake again, then fixes it.
    expect(attempt_rows(page)).to_have_count(before + 2)
    expect(run_pane(page).locator("[data-run-status]")).to_have_text(re.compile("succeeded", re.I))
    sockets.assert_held()


def compare_the_last_two_attempts(page: Page, sockets: PlaygroundSockets) -> None:
    page.get_by_role("button", name="Compare").click()
    expect(
        page.get_by_role("heading", name=re.compile(r"Attempt \d+ vs attempt \d+"))
    ).to_be_visible()
    went_wrong = page.get_by_role("row").filter(has_text="What went wrong")
    expect(went_wrong).to_contain_text("KeyError")
    script_diff = page.locator("section").filter(
        has=page.get_by_role("heading", name="Script diff")
    )
    expect(script_diff).to_contain_text("r.data[0]")
    sockets.page_loading()
    page.get_by_role("link", name="Back to the session").click()


def choose_language(page: Page, label: str) -> None:
    page.get_by_label("Language").select_option(label=label)


def run_a_jq_pipeline_in_bash(page: Page) -> None:
    choose_language(page, "Bash (bashkit)")
    expect(page.locator("#prompt-panel")).to_contain_text("bashkit system prompt")
    editor(page).fill(JQ_PIPELINE)
    expect(page.get_by_role("button", name="Run", exact=True)).to_be_enabled()
    pane = run_and_watch(page, "succeeded")
    expect(pane.locator("[data-run-result]")).to_contain_text("202.25")


# --- demo as an agent ------------------------------------------------------------------------


def create_an_api_token(page: Page) -> str:
    nav(page, "API tokens")
    page.get_by_label("Name").fill("newcomer agent")
    page.get_by_label("Your password").fill(DEMO_PASSWORD)  # a session alone makes none
    page.get_by_role("button", name="Create token").click()
    expect(page.get_by_text("it is not shown again")).to_be_visible()
    # Shown once in full (the list below shows only its prefix, cut with "…").
    return page.get_by_text(re.compile(r"^jzm_[A-Za-z0-9_-]+$")).inner_text().strip()


def see_that_nobody_approves_their_own_submission(page: Page, task: str) -> None:
    nav(page, "Reviews")
    page.get_by_role("row").filter(has_text=task).get_by_role("link").first.click()
    expect(page.get_by_text("another reviewer must approve it")).to_be_visible()
    expect(page.get_by_role("button", name=re.compile(r"^Approve"))).to_have_count(0)


# --- reviewer --------------------------------------------------------------------------------


def open_the_live_queue(page: Page) -> None:
    nav(page, "Reviews")
    expect(page.get_by_role("heading", name=re.compile(r"^Review queue"))).to_be_visible()
    # Submissions arrive over the queue's websocket; it says "live" once it listens.
    expect(page.locator("[data-queue-connection]")).to_have_text("live")


def see_it_arrive_and_open_it(page: Page, task: str) -> None:
    row = page.get_by_role("row").filter(has_text=task)
    expect(row).to_be_visible()  # pushed to the open page: nobody reloaded it
    reviews = page.get_by_role("navigation").get_by_role("link", name=re.compile(r"^Reviews"))
    expect(reviews).to_have_text(re.compile(r"Reviews\s+1\b"))
    row.get_by_role("link").first.click()
    expect(page.get_by_role("heading", name=re.compile(r"^Submission"))).to_be_visible()
    task_card = page.locator("section").filter(has=page.get_by_role("heading", name="Task"))
    expect(task_card).to_contain_text(task)


def edit_approve_and_watch_the_run(page: Page) -> None:
    page.get_by_text("Edit, then approve").click()
    page.locator("[data-edit-body]").fill(REVIEWED_BODY)
    # The reviewer reads their edit against the agent's script before approving it.
    expect(page.get_by_role("heading", name=re.compile(r"^Your changes"))).to_be_visible()
    approve = page.get_by_role("button", name="Approve edited script")
    expect(approve).to_be_enabled()
    approve.click()
    decision = page.locator("#decision-panel")
    expect(decision).to_contain_text("Edited and approved by reviewer")
    expect(decision.locator("[data-run-status]")).to_have_text(
        re.compile("succeeded", re.I), timeout=RUN_TIMEOUT
    )
    expect(decision.locator("[data-run-timeline]")).to_contain_text("order")
    expect(decision.locator("[data-run-result]")).to_contain_text('"reviewed": true')


def reject_with_feedback(page: Page) -> None:
    page.get_by_label("Feedback for the agent's next attempt").fill(FEEDBACK)
    page.get_by_role("button", name="Reject", exact=True).click()
    expect(page.locator("#decision-panel")).to_contain_text("Rejected by reviewer")


def read_the_audit_trail(page: Page) -> None:
    nav(page, "Reviews")
    page.get_by_role("link", name="Audit trail").click()
    expect(page.get_by_role("heading", name="Audit trail")).to_be_visible()
    audit = page.get_by_role("table")
    for action in ("Submitted", "Edited and approved", "Run finished", "Rejected"):
        expect(audit.get_by_role("row").filter(has_text=action).first).to_be_visible()
    expect(audit.get_by_role("row").filter(has_text=FEEDBACK)).to_have_count(1)
    expect(audit.get_by_role("row").filter(has_text="Tool changed").first).to_contain_text(
        "send_receipt"
    )


# --- the story -------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def patient_expectations() -> Iterator[None]:
    """Wait longer than 5 s for what the newcomer should see: the machine's cores are shared."""
    expect.set_options(timeout=STEP_TIMEOUT)
    try:
        yield
    finally:
        expect.set_options(timeout=None)  # Playwright's default again, for other tests


@pytest.fixture
def demo_page(browser, studio_server_with_llm: StudioServer) -> Iterator[Page]:
    with browser_page(browser, studio_server_with_llm) as page:
        yield page


@pytest.fixture
def reviewer_page(browser, studio_server_with_llm: StudioServer) -> Iterator[Page]:
    with browser_page(browser, studio_server_with_llm) as page:
        # Approval may come to ask "are you sure?": the reviewer means it.
        page.on("dialog", lambda dialog: dialog.accept())
        yield page


def test_a_newcomer_follows_the_readme_from_catalog_to_review_and_back(
    demo_page: Page,
    reviewer_page: Page,
    studio_server_with_llm: StudioServer,
    fake_llm: FakeLLM,
) -> None:
    server = studio_server_with_llm
    page = demo_page
    sockets = PlaygroundSockets()
    sockets.watch(page)

    login(page, server)
    browse_catalog_and_read_the_xml_prompt(page)
    edit_a_tools_code_and_read_its_version_diff(page)

    open_playground(page, sockets)
    page.get_by_label("Task").fill(TASK)
    ask_for_a_script_that_makes_the_classic_mistake(page)
    session_url = page.url
    assert "session=" in session_url
    run_it_and_see_it_fail(page)
    see_the_retry_prompt_with_the_keyerror_hint(page)
    retry_and_run_the_fix(page)
    retry_prompt = fake_llm.requests()[-1]["body"]["messages"][-1]["content"]
    assert "KeyError" in retry_prompt, "the LLM was asked again with the failure quoted"
    let_auto_loop_until_it_succeeds(page, sockets)
    compare_the_last_two_attempts(page, sockets)
    run_a_jq_pipeline_in_bash(page)

    token = create_an_api_token(page)
    login(reviewer_page, server, username=REVIEWER, password=REVIEWER_PASSWORD)
    open_the_live_queue(reviewer_page)
    with AgentClient(server.url, token) as agent:
        sandbox = agent.sandbox("demo/ecommerce")
        approved = agent.submit(sandbox=sandbox, task="Total of delivered orders", body=AGENT_BODY)
        assert approved["status"] == "pending", approved
        see_that_nobody_approves_their_own_submission(page, "Total of delivered orders")

        see_it_arrive_and_open_it(reviewer_page, "Total of delivered orders")
        edit_approve_and_watch_the_run(reviewer_page)
        final = agent.wait(approved["id"], timeout=60)
        assert final["status"] == "edited_and_approved", final
        assert final["approved_body"] == REVIEWED_BODY
        assert final["run"]["status"] == "succeeded", final["run"]
        assert final["run"]["result"] == {"total": 202.25, "reviewed": True}

        open_the_live_queue(reviewer_page)
        rejected = agent.submit(sandbox=sandbox, task="Count all orders", body=AGENT_BODY)
        see_it_arrive_and_open_it(reviewer_page, "Count all orders")
        reject_with_feedback(reviewer_page)
        final = agent.wait(rejected["id"], timeout=60)
        assert final["status"] == "rejected", final
        assert FEEDBACK in final["previous_error"]
        assert final["run"] is None

    read_the_audit_trail(reviewer_page)

    # Back to the same playground session: the loop works a second time, and after a reload.
    open_playground(page, sockets, session_url)
    choose_language(page, "Python")
    expect(page.get_by_label("Task")).to_have_value(TASK)
    go_round_the_retry_loop(page, sockets)
    attempts = attempt_rows(page).count()
    reload_playground(page, sockets)
    expect(page.get_by_label("Language")).to_have_value("python")
    expect(attempt_rows(page)).to_have_count(attempts)
    go_round_the_retry_loop(page, sockets)
