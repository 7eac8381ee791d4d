"""Fixtures for review tests: a team with a member (whose token is the agent), a reviewer."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from jazzmine_web.reviews.models import ReviewPolicy, SandboxReviewSettings
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import api_token_create
from tests.web.helpers import allow_tools, teammate

BODY = """\
orders = get_orders(status="delivered")
total = sum(o["price"] for o in orders.data["orders"])
emit_result({"total": total})
"""


@pytest.fixture
def reviewer(team):
    return teammate(team, Role.REVIEWER)


@pytest.fixture
def issued(member):
    """Give the member (ada) an API token: her agent."""
    return api_token_create(user=member, name="ci-bot")


@pytest.fixture
def api(issued):
    """Return a test client that speaks as the agent."""
    return Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}")


@pytest.fixture
def reviewer_client(reviewer):
    client = Client()
    client.force_login(reviewer)
    return client


@pytest.fixture
def auto(ecommerce):
    """The demo sandbox, whose policy lets a script calling only get_orders through."""
    set_policy(ecommerce, ReviewPolicy.UNLISTED_TOOLS)
    allow_tools(ecommerce, "get_orders")
    return ecommerce


@pytest.fixture
def gated(ecommerce):
    """The demo sandbox, whose policy asks a person for every script (get_orders always allowed)."""
    set_policy(ecommerce)
    allow_tools(ecommerce, "get_orders")
    return ecommerce


def set_policy(sandbox, policy: str = ReviewPolicy.ALWAYS, timeout: int = 3600) -> None:
    SandboxReviewSettings.objects.update_or_create(
        sandbox=sandbox, defaults={"policy": policy, "timeout_seconds": timeout}
    )


def approve_form(page: str) -> dict[str, list[str]]:
    """Return the hidden fields a review page's approve form sends, as a browser would."""
    form = page[page.index('data-decision="approve"') :]
    form = form[: form.index("</form>")]
    fields: dict[str, list[str]] = {}
    for name, value in re.findall(r'<input type="hidden" name="(tools_\w+)" value="([^"]*)"', form):
        fields.setdefault(name, []).append(value)
    return fields


def submit(api, sandbox, body: str = BODY, **extra):
    payload = {"sandbox": sandbox.pk, "task": "Total of delivered orders", "body": body, **extra}
    return api.post("/api/v1/submissions/", payload, content_type="application/json")


@pytest.fixture
def no_worker(celery_workers):
    """Stop the session's worker: the test makes its delivery attempts in this process."""
    celery_workers.stop()
