"""Text that team members, agents, LLMs, imports and running scripts wrote is shown as text.

A reviewer's session approves scripts that then run: one script of someone else's markup
running on a page a reviewer opens could approve its author's own submission. Every field
below is filled with hostile text through the way it really arrives (the agents' API, the
importers, a run's events, the forms), and every page a member or reviewer opens, and every
fragment the sockets send, is read as a browser's parser would: the text must be there as
text, and the markup must carry no code of its own (no inline handler, no inline script or
style, no htmx attribute that htmx would evaluate), which the Content-Security-Policy would
refuse anyway (tests/web/test_security_headers.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from types import SimpleNamespace
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.template.loader import render_to_string
from django.test import Client
from django.utils import timezone

from jazzmine.scripttools import ScriptTool
from jazzmine.visible import visible
from jazzmine_web.catalog.models import ImageBuild
from jazzmine_web.catalog.services import tools_import
from jazzmine_web.playground.models import Attempt, PlaygroundSession
from jazzmine_web.reviews.models import (
    AuditEntry,
    ReviewPolicy,
    SandboxReviewSettings,
    Submission,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
)
from jazzmine_web.runs.selectors import pane_regions, run_events_after
from jazzmine_web.runs.services import run_create, run_record_event
from jazzmine_web.scripttools.models import TrialRun
from jazzmine_web.scripttools.services import script_tools_import
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import api_token_create, membership_set
from tests.web.helpers import source_file

pytestmark = pytest.mark.django_db

# Each spelling an attacker would try; every injected element carries `data-pwn`, so markup
# that got through is seen whatever else it does.
HOSTILE = (
    '<img data-pwn src=x onerror="window.__pwned=1">'
    '"><svg data-pwn onload=window.__pwned=1>'
    "'-alert(1)-'"
    "</script><script data-pwn>window.__pwned=1</script>"
    '<div data-pwn hx-get="/logout/" hx-trigger="load">htmx</div>'
    " javascript:window.__pwned=1 \u2028\u2029 {{ 7|add:1 }}{% now 'Y' %}"
)
# A tool's text, which an LLM reads, holds no character a page does not draw (the catalog
# refuses the line separators): the rest of the spellings, there.
HOSTILE_TOOL = HOSTILE.replace("\u2028", "").replace("\u2029", "")
# For short fields (names, labels) and truncated columns.
SHORT = '"><img data-pwn src=x onerror=__pwned=1>'

# The module the catalog importer reads (parsed, never executed): the description, a
# parameter's description and the code itself all carry the text.
HOSTILE_MODULE = f"""
from jazzmine.core.tools import ToolParameter, ToolResponse, tool


@tool(
    description={"Look an order up by id. " + HOSTILE_TOOL!r},
    parameters=[ToolParameter("order_id", "str", {HOSTILE_TOOL!r})],
    sandbox="ecommerce",
)
def hostile_lookup(order_id: str) -> ToolResponse:
    # {HOSTILE_TOOL}
    return ToolResponse(success=True, data={{"note": {HOSTILE!r}}})
"""

SCRIPT_BODY = f"# {SHORT}\nemit_result({{'note': {HOSTILE!r}}})\n"

# Where escaped text may land in an attribute: as a value, never as code or a URL.
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "ws-connect", "hx-get", "hx-post"}
# An htmx trigger with a filter, `event[expression]`, which htmx evaluates as JavaScript (a
# `from:input[name=q]` selector is no filter).
TRIGGER_FILTER = re.compile(r"(?:^|,)\s*[\w:.-]+\[")


@dataclass
class Markup(HTMLParser):
    """What a browser's parser makes of a page: its elements and its text."""

    tags: list[tuple[str, list[tuple[str, str | None]]]] = field(default_factory=list)
    chunks: list[str] = field(default_factory=list)
    script_text: list[str] = field(default_factory=list)
    _in_script: bool = False

    def __post_init__(self) -> None:
        super().__init__(convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        self._in_script = tag == "script"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        (self.script_text if self._in_script else self.chunks).append(data)

    @property
    def text(self) -> str:
        return "".join(self.chunks)


def read(html: str) -> Markup:
    markup = Markup()
    markup.feed(html)
    markup.close()
    return markup


def code_in(html: str) -> list[str]:
    """Return what in the markup is code or injected markup (nothing, on a sound page)."""
    markup = read(html)
    found: list[str] = []
    for tag, attrs in markup.tags:
        names = {name for name, _ in attrs}
        if "data-pwn" in names:
            found.append(f"injected <{tag}>: {attrs}")
        if tag == "style":
            found.append("an inline <style>")
        if tag == "script" and "src" not in names:
            found.append("an inline <script>")
        for name, value in attrs:
            value = value or ""
            if name.startswith("on"):
                found.append(f"an inline handler {name}={value!r} on <{tag}>")
            elif name == "style":
                found.append(f"an inline style on <{tag}>")
            elif name.startswith(("hx-on", "data-hx-on")):
                found.append(f"htmx code {name}={value!r}")
            elif name in ("hx-trigger", "data-hx-trigger") and TRIGGER_FILTER.search(value):
                found.append(f"an htmx trigger filter (eval) {value!r}")
            elif name in ("hx-vals", "hx-vars") and (name == "hx-vars" or "js:" in value):
                found.append(f"htmx code {name}={value!r}")
            elif name in URL_ATTRIBUTES and value.strip().lower().startswith("javascript:"):
                found.append(f"a javascript: URL {name}={value!r}")
    if any(text.strip() for text in markup.script_text):
        found.append("script text")
    return found


def assert_sound(html: str, *shown: str) -> None:
    """The page has no code of its own and no injected markup, and shows `shown` as text."""
    assert code_in(html) == []
    text = read(html).text
    for expected in shown:
        assert expected in text, f"{expected!r} is not shown as text"


@dataclass
class Planted:
    """Hostile text stored everywhere a person, an agent or a script can put it."""

    reviewer: Any
    admin: Any
    member: Any
    sandbox: Any
    python_tool: Any
    script_tool: Any
    pending: Submission
    rejected: Submission
    run: Any
    session: PlaygroundSession


def _user(username: str, team: Any, role: str) -> Any:
    user = get_user_model().objects.create_user(username=username, password="x" * 12)
    membership_set(team=team, user=user, role=role)
    return user


@pytest.fixture
def planted(team, member, ecommerce) -> Planted:
    reviewer = _user("rita", team, Role.REVIEWER)
    admin = _user("adam", team, Role.ADMIN)
    # A site admin names teams; an agent names its token; both show on every review page.
    team.name = f"Shop {SHORT}"
    team.save(update_fields=["name"])
    token = api_token_create(user=member, name=f"bot {SHORT}")
    ecommerce.description = HOSTILE
    ecommerce.save(update_fields=["description"])
    SandboxReviewSettings.objects.update_or_create(
        sandbox=ecommerce, defaults={"policy": ReviewPolicy.ALWAYS, "timeout_seconds": 3600}
    )

    # Imported tools: a Python module, and a script tool (tool.json) with its trial.
    tools_import(team=team, files=[source_file("hostile.py", HOSTILE_MODULE)], author=member)
    python_tool = ecommerce.tools.get(name="hostile_lookup")
    script = ScriptTool(
        name="hostile_script",
        description="Answer hostile questions for tests. Use when a test needs hostile text.",
        parameters={
            "type": "object",
            "properties": {"q": {"type": "string", "description": HOSTILE_TOOL, "default": SHORT}},
        },
        source=f"# {SHORT}\nimport json, sys\nprint(json.dumps({{'q': 1}}))\n",
    )
    script_tools_import(sandbox=ecommerce, tools=[script], author=member)
    script_tool = ecommerce.tools.get(name="hostile_script")
    TrialRun.objects.create(
        tool=script_tool, checksum=script_tool.checksum, code_digest=script_tool.code_digest,
        args={"q": HOSTILE}, state="done",
        status="invalid_json", message=HOSTILE, exit_code=1, stdout=HOSTILE, stderr=HOSTILE,
        finished_at=timezone.now(),
    )  # fmt: skip
    ImageBuild.objects.create(
        sandbox=ecommerce, checksum="0" * 16, status="failed", log=f"step 1\n{HOSTILE}\n",
        line_count=2, error=HOSTILE,
    )  # fmt: skip

    # An agent submits through the API: task, prompt, script and its User-Agent are its own.
    agent = Client(HTTP_AUTHORIZATION=f"Bearer {token.raw}", HTTP_USER_AGENT=f"agent/1 {SHORT}")
    payload = {"sandbox": ecommerce.pk, "task": HOSTILE, "prompt": HOSTILE, "body": SCRIPT_BODY}
    pending = agent.post("/api/v1/submissions/", payload, content_type="application/json")
    assert pending.status_code == 201, pending.content
    second = agent.post("/api/v1/submissions/", payload, content_type="application/json")
    assert second.status_code == 201, second.content
    reviewing = Client()
    reviewing.force_login(reviewer)
    rejected = reviewing.post(f"/reviews/{second.json()['id']}/reject/", {"feedback": HOSTILE})
    assert rejected.status_code in (200, 302), rejected.status_code
    AuditEntry.objects.create(
        sandbox=ecommerce, action="edited", actor_label=SHORT, note=HOSTILE,
        data={"diff": f"--- a\n+++ b\n@@ -1 +1 @@\n-x\n+{HOSTILE}\n", "tools_added": [SHORT]},
    )  # fmt: skip

    # A run whose script printed hostile text in every kind of event.
    run = run_create(sandbox=ecommerce, user=member, body=SCRIPT_BODY, start=False)
    t0 = run.created_at.timestamp()
    events = [
        ("log", {"message": HOSTILE}),
        ("intermediate", {"label": HOSTILE, "data": {HOSTILE: [HOSTILE]}}),
        ("result", {"note": HOSTILE}),
        ("error", {"message": HOSTILE, "traceback": HOSTILE}),
        ("exit", {"outcome": "error", "message": HOSTILE}),
    ]
    for seq, (kind, data) in enumerate(events, start=1):
        event = {"seq": seq, "type": kind, "data": data, "ts": t0 + seq / 100}
        run_record_event(run_id=run.pk, event=event)

    # A webhook whose receiver answered with hostile text.
    endpoint = WebhookEndpoint.objects.create(
        api_token=token.token, url=f"https://agent.example/{SHORT}", secret_ciphertext="x"
    )
    delivery = WebhookDelivery.objects.create(
        endpoint=endpoint, submission_id=pending.json()["id"], event="submission.decided",
        url=endpoint.url, body="{}", status="failed", cancel_reason=SHORT[:200],
    )  # fmt: skip
    WebhookAttempt.objects.create(
        delivery=delivery, number=1, started_at=timezone.now(), status_code=500, error=HOSTILE
    )

    # The playground: the member's task, an LLM's attempts, hints and errors.
    session = PlaygroundSession.objects.create(user=member, sandbox=ecommerce, task=HOSTILE)
    for number in (1, 2):
        Attempt.objects.create(
            session=session, number=number, source="llm", prompt=HOSTILE, hint=HOSTILE,
            llm_error=HOSTILE, body=f"{SCRIPT_BODY}# {number}\n",
        )  # fmt: skip
    return Planted(
        reviewer=reviewer, admin=admin, member=member, sandbox=ecommerce,
        python_tool=python_tool, script_tool=script_tool,
        pending=Submission.objects.get(pk=pending.json()["id"]),
        rejected=Submission.objects.get(pk=second.json()["id"]), run=run, session=session,
    )  # fmt: skip


def _as(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _page(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return response.content.decode()


def test_the_reviewers_pages_show_hostile_text_as_text(planted: Planted) -> None:
    reviewer = _as(planted.reviewer)
    pending, rejected = planted.pending, planted.rejected
    assert_sound(_page(reviewer, "/reviews/"), SHORT)
    review = _page(reviewer, f"/reviews/{pending.pk}/")
    # The task, the prompt, the script (highlighted), the agent's User-Agent, its token's name.
    # What the agent wrote with the line separators written as escapes (`jazzmine.visible`).
    assert_sound(review, visible(HOSTILE), f"# {SHORT}", f"agent/1 {SHORT}", f"bot {SHORT}")
    assert_sound(_page(reviewer, f"/reviews/{rejected.pk}/"), visible(HOSTILE))  # the feedback
    assert_sound(_page(reviewer, "/reviews/audit/"), SHORT)
    # The receiver's error (cut to 80 characters), the URL, the token's name.
    assert_sound(_page(_as(planted.member), "/reviews/webhooks/"), HOSTILE[:40], f"bot {SHORT}")
    assert "{{ 7|add:1 }}{% now 'Y' %}" in read(review).text  # never rendered as a template


def test_the_run_page_shows_what_the_script_printed_as_text(planted: Planted) -> None:
    member = _as(planted.member)
    html = _page(member, f"/runs/{planted.run.pk}/")
    # Its output with the line separators written as escapes (`jazzmine.visible`).
    assert_sound(html, visible(HOSTILE), f"# {SHORT}")
    assert_sound(_page(member, "/runs/"))


def test_a_live_run_page_carries_no_code_on_its_socket_region(planted: Planted) -> None:
    live = run_create(sandbox=planted.sandbox, user=planted.member, body=SCRIPT_BODY, start=False)
    html = _page(_as(planted.member), f"/runs/{live.pk}/")
    assert "ws-connect" in html  # it follows its run
    assert_sound(html)


def test_the_catalog_pages_show_imported_text_as_text(planted: Planted) -> None:
    member = _as(planted.member)
    assert_sound(_page(member, "/"), SHORT)
    assert_sound(_page(member, "/catalog/"), "Look an order up by id.")
    assert_sound(_page(member, f"/catalog/sandboxes/{planted.sandbox.pk}/"), HOSTILE)
    python_tool = _page(member, f"/catalog/tools/{planted.python_tool.pk}/")
    assert_sound(python_tool, HOSTILE_TOOL)
    script_tool = _page(member, f"/catalog/tools/{planted.script_tool.pk}/")
    assert_sound(script_tool, HOSTILE_TOOL)  # the trial form's help text, stdout and stderr
    diff = _page(member, f"/catalog/tools/{planted.python_tool.pk}/versions/1/diff/")
    assert_sound(diff, "Look an order up by id.")


def test_the_tool_edit_pages_carry_no_code(planted: Planted) -> None:
    admin = _as(planted.admin)
    assert_sound(_page(admin, f"/catalog/tools/{planted.python_tool.pk}/edit/"), HOSTILE_TOOL)
    script_form = _page(admin, f"/catalog/tools/{planted.script_tool.pk}/script/edit/")
    assert_sound(script_form, f"# {SHORT}")


def test_a_tool_name_reaches_the_delete_question_as_text_never_as_code() -> None:
    # Tool names are identifiers today; the question must not depend on that.
    name = "x');window.__pwned=1;('"
    html = render_to_string("catalog/_tool_delete.html", {"tool": SimpleNamespace(pk=1, name=name)})
    assert code_in(html) == []
    forms = [dict(attrs) for tag, attrs in read(html).tags if tag == "form"]
    assert forms[0]["data-confirm"] == f"Delete {name} and its versions?"


def test_the_playground_shows_the_task_and_attempts_as_text(planted: Planted) -> None:
    member = _as(planted.member)
    session = planted.session
    assert_sound(_page(member, f"/playground/?session={session.pk}"), HOSTILE)
    assert_sound(_page(member, f"/playground/sessions/{session.pk}/compare/?a=1&b=2"), HOSTILE)
    assert_sound(_page(member, f"/playground/prompt/?sandbox={planted.sandbox.pk}&task=x"))


def test_the_account_and_admin_pages_carry_no_code(planted: Planted) -> None:
    member = _as(planted.member)
    assert_sound(_page(member, "/account/tokens/"), f"bot {SHORT}", f"Shop {SHORT}")
    admin = _as(planted.admin)
    assert_sound(_page(admin, f"/reviews/sandboxes/{planted.sandbox.pk}/policy/"))


def test_the_socket_fragments_carry_text_and_no_code(planted: Planted) -> None:
    run = planted.run
    regions = pane_regions(run, run_events_after(run, 0))
    events = render_to_string(
        "runs/_output.html#run-events",
        {"run": run, "replace": True, "timeline": regions.timeline, "logs": regions.logs,
         "result": regions.result, "error": regions.error},
    )  # fmt: skip
    assert_sound(events, visible(HOSTILE))
    queue = render_to_string(
        "reviews/queue.html#queue-update",
        {"submissions": [planted.pending], "filters": {}, "arrived": set(), "pending_count": 1},
    )
    assert_sound(queue, SHORT)
    refresh = render_to_string(
        "reviews/review.html#decision-refresh", {"submission": planted.pending, "oob": True}
    )
    assert_sound(refresh)
    for partial, context in [
        ("build-log-append", {"seq": 2, "line": HOSTILE}),
        ("build-log-snapshot", {"lines": [(1, HOSTILE)], "build": None, "image": None}),
    ]:
        fragment = render_to_string(f"catalog/sandbox_detail.html#{partial}", context)
        assert_sound(fragment, HOSTILE)


def test_every_planted_field_really_holds_the_text(planted: Planted) -> None:
    # The pages above are only proof if the hostile text was stored as sent, not refused.
    assert planted.pending.task == HOSTILE and planted.pending.prompt == HOSTILE
    assert planted.rejected.feedback == HOSTILE
    assert HOSTILE_TOOL in planted.python_tool.description
    assert planted.python_tool.parameters[0]["description"] == HOSTILE_TOOL
    assert planted.pending.agent_user_agent == f"agent/1 {SHORT}"
