from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from jazzmine_web.reviews.models import Submission

from .conftest import submit

pytestmark = pytest.mark.django_db


def test_the_queue_lists_what_waits_and_the_nav_counts_it(api, ecommerce, reviewer_client) -> None:
    first = submit(api, ecommerce).json()
    submit(api, ecommerce, body="import os\n")  # answered at once: never queued
    html = reviewer_client.get("/reviews/").content.decode()
    assert f'id="submission-{first["id"]}"' in html
    assert html.count('class="queue-row"') == 1
    assert 'data-review-badge title="Submissions waiting for your review">1<' in html


def test_a_member_sees_the_queue_but_no_count(api, ecommerce, logged_in) -> None:
    submit(api, ecommerce)
    html = logged_in.get("/reviews/").content.decode()
    assert html.count('class="queue-row"') == 1
    assert 'data-review-badge title="Submissions waiting for your review">0<' in html


def test_the_queue_filters_by_sandbox_and_age(
    api, ecommerce, empty_sandbox, reviewer_client
) -> None:
    state = submit(api, ecommerce).json()
    assert (
        reviewer_client.get(f"/reviews/?sandbox={empty_sandbox.pk}").content.count(
            b'class="queue-row"'
        )
        == 0
    )
    assert (
        reviewer_client.get(f"/reviews/?sandbox={ecommerce.pk}").content.count(b'class="queue-row"')
        == 1
    )
    assert reviewer_client.get("/reviews/?age=gt10m").content.count(b'class="queue-row"') == 0
    Submission.objects.filter(pk=state["id"]).update(
        created_at=timezone.now() - datetime.timedelta(minutes=20)
    )
    assert reviewer_client.get("/reviews/?age=gt10m").content.count(b'class="queue-row"') == 1
    assert reviewer_client.get("/reviews/?age=lt10m").content.count(b'class="queue-row"') == 0
    partial = reviewer_client.get(
        "/reviews/?age=gt10m", headers={"HX-Request": "true", "HX-Target": "queue-table"}
    )
    assert partial.content.decode().lstrip().startswith('<table id="queue-table"')


def test_the_review_page_shows_everything_a_reviewer_needs(api, ecommerce, reviewer_client) -> None:
    first = submit(api, ecommerce, body="import os\nemit_result(1)\n").json()
    body = 'orders = get_orders(status="delivered")\nemit_result(get_user("U-1").data)\n'
    second = submit(
        api, ecommerce, body=body, attempt=2, previous=first["id"], prompt="PROMPT-MARKER"
    ).json()
    html = reviewer_client.get(f"/reviews/{second['id']}/").content.decode()
    assert "Total of delivered orders" in html  # the task
    assert "PROMPT-MARKER" in html  # the prompt the agent used
    assert 'data-tool="get_orders"' in html and 'data-tool="get_user"' in html
    assert "no — needs review" in html  # always_allow flags
    assert "agent ci-bot (ada)" in html  # the agent's identity
    assert (
        "Against attempt 1" in html and "Its failure" in html and "import" in html
    )  # diff and failure
    # A highlighted diff: the first attempt's lines marked removed, the second's added.
    assert '<span class="gd">-import os' in html
    assert '<span class="gi">+emit_result(get_user(' in html
    assert 'data-decision="approve"' in html and 'data-shortcut="a"' in html
    assert "review-keys.js" in html and "run-stream.js" not in html
    assert f'ws-connect="/ws/reviews/queue/?submission={second["id"]}"' in html


def test_the_review_page_marks_violation_lines(api, ecommerce, reviewer_client) -> None:
    state = submit(api, ecommerce, body='x = 1\nopen("/etc/passwd")\n').json()
    html = reviewer_client.get(f"/reviews/{state['id']}/").content.decode()
    assert 'class="hll"' in html
    assert "Line 2:" in html


def test_a_rejection_by_htmx_swaps_in_the_decided_panel(api, ecommerce, reviewer_client) -> None:
    state = submit(api, ecommerce).json()
    response = reviewer_client.post(
        f"/reviews/{state['id']}/reject/",
        {"feedback": "No."},
        headers={"HX-Request": "true", "HX-Target": "decision-panel"},
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<section class="card decision" id="decision-panel"')
    assert 'data-status="rejected"' in html and "No." in html


def test_a_bad_edit_by_htmx_keeps_the_editor_with_the_violations(
    api, ecommerce, reviewer_client
) -> None:
    state = submit(api, ecommerce).json()
    response = reviewer_client.post(
        f"/reviews/{state['id']}/edit/",
        {"body": "import os\nemit_result(1)\n"},
        headers={"HX-Request": "true", "HX-Target": "decision-panel"},
    )
    html = response.content.decode()
    assert 'data-status="pending"' in html
    assert "import os" in html and "Line 1:" in html


def test_a_bad_edits_violations_are_said_once(api, ecommerce, reviewer_client) -> None:
    # The panel said each rule three times: in the error, in a list above the form, and in
    # the editor's own list.
    state = submit(api, ecommerce).json()
    for headers in ({"HX-Request": "true", "HX-Target": "decision-panel"}, {}):
        response = reviewer_client.post(
            f"/reviews/{state['id']}/edit/", {"body": "import os\nemit_result(1)\n"},
            headers=headers,
        )  # fmt: skip
        html = response.content.decode()
        assert html.count("import statements are not allowed") == 1, html
        assert "The edit was not approved: it breaks 1 rule of the validator" in html
        listed = html[html.index("data-edit-violations") :]
        assert listed.index("import statements are not allowed") < listed.index("</ul>")
