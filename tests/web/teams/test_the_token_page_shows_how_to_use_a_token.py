"""The API tokens page shows an agent's first calls, and they work pasted into a shell as shown.

A newcomer who creates a token finds nothing else in the app about the API: the page itself
says what a token is for and gives commands naming this server, one of their sandboxes and
the new token.
"""

from __future__ import annotations

import html
import json
import subprocess
import threading
import time
from urllib.parse import urlsplit

import pytest
from django.db import connection

from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_reject
from jazzmine_web.teams.models import Role
from tests.web.helpers import teammate

pytestmark = pytest.mark.django_db(transaction=True)


def example_on_page(client, host: str) -> str:
    """Create a token on the page as a browser at `host` would; return the shown commands."""
    form = {"name": "my agent", "password": "correct horse battery"}  # the `user` fixture's
    response = client.post("/account/tokens/", form, HTTP_HOST=host)
    page = response.content.decode()
    return html.unescape(page.split('<pre class="wrap" id="api-example">')[1].split("</pre>")[0])


def reject_when_submitted(reviewer, stop: threading.Event) -> None:
    """Decide the first submission that arrives, as a teammate at /reviews/ would."""
    try:
        while not stop.is_set():
            submission = Submission.objects.filter(status="pending").first()
            if submission is not None:
                submission_reject(submission=submission, user=reviewer, feedback="Not today.")
                return
            time.sleep(0.1)
    finally:
        connection.close()


def test_the_commands_list_submit_and_wait_as_pasted(
    live_server, logged_in, member, ecommerce
) -> None:
    host = urlsplit(live_server.url).netloc
    example = example_on_page(logged_in, host)
    assert f"{live_server.url}/api/v1/submissions/" in example
    assert '"sandbox": "shop/ecommerce"' in example

    reviewer = teammate(ecommerce.team, Role.REVIEWER)
    stop = threading.Event()
    bot = threading.Thread(target=reject_when_submitted, args=(reviewer, stop))
    bot.start()
    try:
        shell = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", example],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        stop.set()
        bot.join()
    assert shell.returncode == 0, shell.stderr
    listed, waited = shell.stdout.splitlines()
    assert [s["name"] for s in json.loads(listed)["sandboxes"]] == ["ecommerce"]
    final = json.loads(waited)
    assert final["status"] == "rejected" and final["feedback"] == "Not today."
    assert final["task"] == "Say hello" and final["agent"]["token"] == "my agent"


def test_without_a_new_token_the_commands_ask_for_one(logged_in, member, ecommerce) -> None:
    page = logged_in.get("/account/tokens/").content.decode()
    example = html.unescape(page.split('id="api-example">')[1].split("</pre>")[0])
    assert example.startswith("TOKEN=jzm_...\n")
    assert "http://testserver/api/v1/sandboxes/" in example
    assert "read API" not in page


def test_someone_without_a_sandbox_gets_a_placeholder(logged_in) -> None:
    page = logged_in.get("/account/tokens/").content.decode()
    assert "TEAM/SANDBOX" in html.unescape(page)
