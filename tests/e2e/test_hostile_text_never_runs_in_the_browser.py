"""Hostile text in every field, in a real Chromium: shown as text, never run, no CSP report.

A reviewer's session approves scripts that then run, so one script of someone else's markup on
a page a reviewer opens could approve its author's own submission. Here an agent, an imported
module, a script tool's tool.json, a running script's events, a webhook receiver, a team name
and a token name all carry the spellings an attacker would try; a member and a reviewer then
open every page those reach, live (websockets, htmx) and after a reload. Every payload calls
a binding (`__pwn`) or asks for /__pwn__/, so running any of it is seen; and since the pages
must hold under the Content-Security-Policy, any violation report fails the test too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from jazzmine.agent_client import AgentClient
from jazzmine.visible import visible
from tests.scripttools.unreadable_zips import zip_of

from .conftest import StudioServer, agent_token, browser_page, login, seeded_studio_server, serve

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

HOSTILE = (
    '<img data-pwn src=x onerror="__pwn(1)">'
    '"><svg data-pwn onload=__pwn(2)>'
    "'-__pwn(3)-'"
    "</script><script data-pwn>__pwn(4)</script>"
    '<div data-pwn hx-get="/__pwn__/5" hx-trigger="load">htmx</div>'
    '<a data-pwn href="javascript:__pwn(6)">link</a>'
    " \u2028\u2029 {{ 7|add:1 }} <!-- -->"
)
# As pages show what a script printed or an agent wrote: the line separators as escapes.
SHOWN = visible(HOSTILE)
# A tool's text, which an LLM reads, holds no character a page does not draw (the catalog
# refuses the line separators): the rest of the spellings, there.
HOSTILE_TOOL = HOSTILE.replace("\u2028", "").replace("\u2029", "")
SHORT = '"><img data-pwn src=x onerror=__pwn(7)>'

HOSTILE_MODULE = f"""
from jazzmine.core.tools import ToolParameter, ToolResponse, tool


@tool(
    description={"Look an order up by id. " + HOSTILE_TOOL!r},
    parameters=[ToolParameter("order_id", "str", {HOSTILE_TOOL!r})],
    sandbox="hostile",
)
def hostile_lookup(order_id: str) -> ToolResponse:
    # {SHORT}
    return ToolResponse(success=True, data={{"note": {HOSTILE!r}}})
"""

TOOL_JSON = {
    "name": "hostile_script",
    "description": "Answer hostile questions for tests. Use when a test needs hostile text.",
    "parameters": {
        "type": "object",
        "properties": {"q": {"type": "string", "description": HOSTILE_TOOL, "default": SHORT}},
    },
}

# A script that prints hostile text in every kind of event, slowly enough that the page
# follows it live.
SCRIPT = f"""\
# {SHORT}
orders = get_orders(status="delivered")
time.sleep(1.5)
emit_log({HOSTILE!r})
emit_intermediate({HOSTILE!r}, {{{HOSTILE!r}: [{HOSTILE!r}]}})
time.sleep(0.5)
emit_result({{"note": {HOSTILE!r}, "orders": len(orders.data["orders"])}})
"""

PLANT = """
from django.utils import timezone
from django.contrib.auth import get_user_model
from jazzmine_web.catalog.services import sandbox_create
from jazzmine_web.teams.models import Team
from jazzmine_web.teams.services import api_token_create
from jazzmine_web.reviews.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
Team.objects.filter(slug="demo").update(name="Demo " + SHORT)
sandbox_create(team=Team.objects.get(slug="demo"), name="second", description=HOSTILE)
# The demo user's own token, with a webhook whose receiver answered with hostile text.
token = api_token_create(user=get_user_model().objects.get(username="demo"), name=HOOK_TOKEN).token
endpoint = WebhookEndpoint.objects.create(api_token=token, url="https://agent.example/" + SHORT,
                                          secret_ciphertext="x")
delivery = WebhookDelivery.objects.create(endpoint=endpoint, event="submission.decided",
    url=endpoint.url, body="{}", status="failed", cancel_reason=SHORT)
WebhookAttempt.objects.create(delivery=delivery, number=1, started_at=timezone.now(),
                              status_code=500, error=HOSTILE)
"""

TOKEN_NAME = f"bot {SHORT}"
HOOK_TOKEN = f"hooks {SHORT}"
USER_AGENT = f"agent/1 {SHORT}"


@dataclass
class Watch:
    """What ran that should not have: payload calls, their requests, CSP reports, errors."""

    pwned: list[Any] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    csp: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def attach(self, page: Page) -> None:
        context = page.context
        context.expose_binding("__pwn", lambda _source, n=None: self.pwned.append(n))
        context.expose_binding("__cspReport", lambda _source, text: self.csp.append(text))
        context.add_init_script(
            """document.addEventListener("securitypolicyviolation", (e) =>
                 window.__cspReport(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`));
               document.addEventListener("htmx:evalDisallowedError", () =>
                 window.__cspReport("htmx wanted eval"));"""
        )
        # A request *to* /__pwn__/ (the hostile text may well be in a query string).
        page.on(
            "request",
            lambda r: urlsplit(r.url).path.startswith("/__pwn__") and self.requests.append(r.url),
        )
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on(
            "console",
            lambda m: "Content Security Policy" in m.text and self.csp.append(m.text),
        )

        def dialog(d: Any) -> None:
            self.dialogs.append(d.message)
            d.dismiss()

        page.on("dialog", dialog)

    def assert_clean(self, page: Page, *shown: str) -> None:
        """Nothing ran, nothing was refused, no markup got in; `shown` is there as text."""
        assert page.locator("[data-pwn]").count() == 0
        assert self.pwned == [] and self.requests == [] and self.dialogs == []
        assert self.csp == [], self.csp
        assert self.errors == [], self.errors
        text = page.locator("body").text_content() or ""
        for expected in shown:
            assert expected in text, f"{expected!r} is not shown on {page.url}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StudioServer]:
    """A server of its own: the hostile team name and tools stay out of other tests' pages."""
    with serve(seeded_studio_server(tmp_path_factory)) as studio:
        yield studio


@pytest.fixture(scope="module")
def raw_token(server: StudioServer) -> str:
    """Plant what comes from outside the pages: the token's and team's names, a webhook's
    failed delivery; return the agent's token."""
    raw = agent_token(server, username="agent-bot", token=TOKEN_NAME)
    code = PLANT.replace("SHORT", repr(SHORT)).replace("HOSTILE", repr(HOSTILE))
    server.manage("shell", "-c", code.replace("HOOK_TOKEN", repr(HOOK_TOKEN)))
    return raw


@pytest.fixture
def watched(browser, server: StudioServer, raw_token: str) -> Iterator[tuple[Page, Watch]]:
    with browser_page(browser, server) as page:
        watch = Watch()
        watch.attach(page)
        login(page, server)
        yield page, watch


@pytest.fixture
def agent(server: StudioServer, raw_token: str) -> Iterator[AgentClient]:
    with AgentClient(server.url, raw_token, user_agent=USER_AGENT) as client:
        yield client


def test_imported_tools_show_their_text_in_the_catalog(watched) -> None:
    page, watch = watched
    page.goto("/catalog/import/")
    page.set_input_files(
        "input[name=files]",
        files=[{"name": "hostile.py", "mimeType": "text/x-python",
                "buffer": HOSTILE_MODULE.encode()}],
    )  # fmt: skip
    page.click("form button[type=submit]")
    page.locator("#import-result .ok-box").wait_for()
    watch.assert_clean(page, "hostile_lookup")

    page.goto("/catalog/script-tools/import/")
    option = page.locator("select[name=sandbox] option", has_text="hostile")
    page.select_option("select[name=sandbox]", value=option.get_attribute("value"))
    archive = zip_of(
        {"hostile_script/tool.json": json.dumps(TOOL_JSON),
         "hostile_script/script.py": f"# {SHORT}\nimport json\nprint(json.dumps({{'q': 1}}))\n"}
    )  # fmt: skip
    page.set_input_files(
        "input[name=archive]",
        files=[{"name": "tools.zip", "mimeType": "application/zip", "buffer": archive}],
    )
    page.click("form button[type=submit]")
    page.locator("#import-result .ok-box").wait_for()
    watch.assert_clean(page)

    page.goto("/catalog/?q=order")
    watch.assert_clean(page, "Look an order up by id.")
    page.locator("a", has_text="hostile_lookup").click()
    page.wait_for_url(re.compile(r"/catalog/tools/\d+/$"))
    watch.assert_clean(page, HOSTILE_TOOL, f"# {SHORT}")
    page.locator("#versions button", has_text="Diff").first.click()
    page.locator("#version-diff h3").wait_for()
    watch.assert_clean(page, "Look an order up by id.")

    page.goto("/catalog/?q=hostile_script")
    page.locator("a", has_text="hostile_script").click()
    page.wait_for_url(re.compile(r"/catalog/tools/\d+/$"))
    watch.assert_clean(page, HOSTILE_TOOL, f"# {SHORT}")  # the trial form's help text, script
    page.goto("/")
    watch.assert_clean(page, f"Demo {SHORT}")


def test_a_reviewer_reads_approves_and_watches_a_hostile_run(watched, agent) -> None:
    page, watch = watched
    sandbox = agent.sandbox("demo/ecommerce")
    page.goto("/reviews/")
    # (Locators and expect(), never a string wait_for_function: Playwright evals that in the
    # page, which the policy refuses.)
    expect(page.locator("body")).to_have_attribute("data-queue-socket", "open")
    assert page.locator("[data-queue-connection]").inner_text() == "live"
    submitted = agent.submit(sandbox=sandbox, task=HOSTILE, prompt=HOSTILE, body=SCRIPT)
    assert submitted["status"] == "pending", submitted
    row = page.locator(f"#submission-{submitted['id']}")
    row.wait_for(timeout=10_000)  # arrived live, over the queue socket
    watch.assert_clean(page, TOKEN_NAME, HOSTILE[:40])

    row.locator("a").click()
    page.wait_for_url(f"**/reviews/{submitted['id']}/")
    # The task, the prompt, the script (highlighted), the agent's token and User-Agent.
    watch.assert_clean(page, SHOWN, f"# {SHORT}", TOKEN_NAME, USER_AGENT)
    page.locator("summary[data-shortcut=a]").click()
    page.locator("[data-approve-confirm]").click()
    page.locator("#decision-panel[data-status=approved]").wait_for()
    # The run streams into the panel: the script's log, intermediate and result, as text.
    page.locator("[data-run-result]:not([hidden])").wait_for(timeout=120_000)
    watch.assert_clean(page, SHOWN)
    assert SHOWN in page.locator("[data-run-logs]").text_content()
    assert SHOWN in page.locator("[data-run-timeline]").text_content()
    result = page.locator("[data-run-result-body]").text_content()
    assert visible(json.dumps(HOSTILE, ensure_ascii=False)) in result  # the result, pretty JSON

    page.locator("[data-run-link]").click()
    page.wait_for_url(re.compile(r"/runs/[0-9a-f-]+/$"))
    watch.assert_clean(page, SHOWN, f"# {SHORT}")
    page.goto("/runs/")
    watch.assert_clean(page)


def test_the_live_run_page_follows_a_hostile_run_and_reads_it_after_reload(
    watched, agent, server
) -> None:
    page, watch = watched
    sandbox = agent.sandbox("demo/ecommerce")
    submitted = agent.submit(sandbox=sandbox, task="Run it", body=SCRIPT)
    page.goto(f"/reviews/{submitted['id']}/")
    page.locator("summary[data-shortcut=a]").click()
    page.locator("[data-approve-confirm]").click()
    page.locator("#decision-panel[data-status=approved]").wait_for()
    run_id = page.locator("[data-run-output]").get_attribute("data-run-id")
    page.goto(f"/runs/{run_id}/")  # while it runs (it sleeps first): the page follows it
    page.locator("[data-run-result]:not([hidden])").wait_for(timeout=120_000)
    watch.assert_clean(page, SHOWN)
    page.reload()
    page.locator("[data-run-status][data-status=succeeded]").wait_for()
    watch.assert_clean(page, SHOWN)


def test_feedback_and_a_withdrawal_reach_the_review_page_as_text(watched, agent) -> None:
    page, watch = watched
    sandbox = agent.sandbox("demo/ecommerce")
    rejected = agent.submit(sandbox=sandbox, task=HOSTILE, body=SCRIPT)
    page.goto(f"/reviews/{rejected['id']}/")
    page.keyboard.press("r")
    page.locator("[data-feedback]").fill(HOSTILE)
    page.keyboard.press("Control+Enter")
    page.locator("#decision-panel[data-status=rejected]").wait_for()
    watch.assert_clean(page, SHOWN)
    page.reload()
    watch.assert_clean(page, SHOWN)

    # Decided elsewhere while the page is open: the queue socket says so, and the panel
    # (its status now stale) reloads by itself.
    withdrawn = agent.submit(sandbox=sandbox, task=HOSTILE, body=SCRIPT)
    page.goto(f"/reviews/{withdrawn['id']}/")
    page.locator("#decision-panel[data-status=pending]").wait_for()
    page.wait_for_timeout(500)  # the page's socket is open
    page.evaluate("window.__notReloaded = true")
    agent.withdraw(withdrawn["id"], reason=HOSTILE)
    page.locator("#decision-panel[data-status=withdrawn]").wait_for(timeout=15_000)
    assert page.evaluate("window.__notReloaded") is True
    watch.assert_clean(page, SHOWN)

    page.goto("/reviews/audit/")
    watch.assert_clean(page, TOKEN_NAME)
    page.goto("/reviews/webhooks/")
    watch.assert_clean(page, HOOK_TOKEN, HOSTILE[:40])  # the receiver's error, cut
    page.goto("/account/tokens/")
    watch.assert_clean(page, HOOK_TOKEN, f"Demo {SHORT}")


def test_the_playground_shows_a_hostile_task_and_run_as_text(watched) -> None:
    page, watch = watched
    page.goto("/playground/")
    ecommerce = page.locator("#sandbox-select option", has_text="ecommerce").get_attribute("value")
    page.goto(f"/playground/?sandbox={ecommerce}")
    page.wait_for_selector("#playground[data-socket=open]")
    watch.assert_clean(page)
    page.locator("#task").fill(HOSTILE)
    page.locator("#prompt-panel", has_text="{{ 7|add:1 }}").wait_for()  # the task in the prompt
    page.locator("#script-body").fill(SCRIPT)
    expect(page.locator("#run-button")).to_be_enabled()
    # The editor's overlay is the server's highlighting of the text: as text too.
    assert f"# {SHORT}" in page.locator(".editor-overlay").text_content()
    page.click("#run-button")
    page.locator("#run-output-slot [data-run-result]:not([hidden])").wait_for(timeout=120_000)
    watch.assert_clean(page, SHOWN)
    assert SHOWN in page.locator("#run-output-slot [data-run-logs]").text_content()
    page.reload()
    page.wait_for_selector("#playground[data-socket=open]")
    watch.assert_clean(page, HOSTILE)
    # Another sandbox is another page (the select's handler is in playground.js).
    select = page.locator("#sandbox-select")
    second = select.locator("option", has_text="second").get_attribute("value")
    select.select_option(second)
    page.wait_for_url(re.compile(rf"\?sandbox={second}&language=python$"))
    watch.assert_clean(page, f"Demo {SHORT}")


def test_htmx_runs_without_eval_or_its_own_styles(watched) -> None:
    page, watch = watched
    page.goto("/catalog/")
    assert page.evaluate("htmx.config.allowEval") is False
    assert page.evaluate("htmx.config.includeIndicatorStyles") is False
    assert page.locator("head style").count() == 0
    page.locator("input[name=q]").fill("orders")
    page.wait_for_url(re.compile(r"q=orders"))  # htmx swapped the results and pushed the URL
    watch.assert_clean(page, "get_orders")


def test_the_admin_shows_hostile_rows_as_text_under_the_policy(watched, agent) -> None:
    page, watch = watched
    submitted = agent.submit(sandbox=agent.sandbox("demo/ecommerce"), task=HOSTILE, body=SCRIPT)
    page.goto("/admin/")
    watch.assert_clean(page)
    page.goto("/admin/reviews/submission/")
    watch.assert_clean(page)
    page.goto(f"/admin/reviews/submission/{submitted['id']}/change/")
    watch.assert_clean(page, HOSTILE[:40], f"# {SHORT}")
    page.goto("/admin/teams/team/")
    watch.assert_clean(page, f"Demo {SHORT}")
