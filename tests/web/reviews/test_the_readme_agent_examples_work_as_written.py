"""The README's agent examples, pasted as they are, work against the demo's sandbox.

Only what the README tells its reader to change is changed: the token, and the server's
address for the test's own. The Python example's `write` once returned nothing (`...`), so
pasted it died in `body_of` before submitting anything.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time

import pytest
from django.conf import settings
from django.db import connection

from jazzmine_web.catalog.importer import source_file_from_path
from jazzmine_web.catalog.services import tools_import
from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_approve
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import api_token_create, membership_set, team_create
from tests.web.helpers import DEMO, accept_code, teammate

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

README = (settings.BASE_DIR / "README.md").read_text()
AGENTS = README.split("\n## Agents\n", 1)[1].split("\n## ", 1)[0]


def block(language: str) -> str:
    """Return the section's one fenced block in this language."""
    (found,) = re.findall(rf"^```{language}\n(.*?)^```$", AGENTS, flags=re.M | re.S)
    return found


@pytest.fixture
def demo(user):
    """The demo's team (`demo`) and sandbox (`ecommerce`), the user its member."""
    team = team_create(name="Demo team", slug="demo")
    membership_set(team=team, user=user, role=Role.MEMBER)
    tools_import(team=team, files=[source_file_from_path(DEMO)], author=user)
    accept_code(team.sandboxes.get(name="ecommerce"))
    return team


def as_written(text: str, live_server, raw: str) -> str:
    text = text.replace("jzm_...", raw)
    return re.sub(r"http://(localhost|127\.0\.0\.1):8000", live_server.url, text)


def approve_when_submitted(reviewer, stop: threading.Event) -> None:
    """Approve what arrives, as `reviewer` does at /reviews/."""
    try:
        while not stop.is_set():
            for submission in Submission.objects.filter(status="pending"):
                submission_approve(submission=submission, user=reviewer)
            time.sleep(0.1)
    finally:
        connection.close()


def test_the_curl_example_submits(live_server, user, demo) -> None:
    raw = api_token_create(user=user, name="shell").raw
    shell = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", as_written(block("sh"), live_server, raw)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shell.returncode == 0, shell.stderr
    answer = json.loads(shell.stdout)
    assert answer["status"] == "pending" and answer["violations"] == []
    assert answer["sandbox"]["name"] == "ecommerce" and answer["task"] == "Say hello"


def test_the_python_agent_runs_from_the_checkout(live_server, user, demo, worker) -> None:
    raw = api_token_create(user=user, name="agent").raw
    reviewer = teammate(demo, Role.REVIEWER)
    stop = threading.Event()
    bot = threading.Thread(target=approve_when_submitted, args=(reviewer, stop))
    bot.start()
    try:
        # `.venv/bin/python agent.py` in the checkout: its directory first on sys.path.
        agent = subprocess.run(
            [sys.executable, "-c", as_written(block("python"), live_server, raw)],
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            timeout=240,
        )
    finally:
        stop.set()
        bot.join()
    assert agent.returncode == 0, agent.stderr
    assert agent.stdout == "True {'total': 202.25}\n"
