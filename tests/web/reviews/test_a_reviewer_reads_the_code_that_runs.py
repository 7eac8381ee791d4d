"""A reviewer reads, edits and approves exactly the code that runs, whatever else an answer holds.

An agent's answer may be more than its code: LLMs wrap it in prose and a Markdown fence, and
only the fenced code runs. The review page showed the answer as sent. An agent could then send
a program of its own with a fence inside a string literal: the reviewer read (and approved) the
program, and the fence's text, a different program, was what ran. Now a text that is a program
runs as written; the fence is taken only from a text that is not; and the page, its editor and
its diffs show the body that runs, with the answer as sent folded away beside it.
"""

from __future__ import annotations

import html

import pytest

from jazzmine_web.reviews.models import Submission, SubmissionStatus
from jazzmine_web.runs.models import Run, RunStatus

from .conftest import submit

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.docker]

FENCE = "`" * 3
SHIPPED = 'r = update_order_status(order_id="ORD-1", status="shipped")'
CANCELLED = 'r = update_order_status(order_id="ORD-1", status="cancelled")'
RESULT = 'emit_result({"status": r.data["status"]})'

# A program of its own; the fence sits in a string it never runs.
DECOY_IN_A_STRING = f'''\
# Mark order ORD-1 as shipped.
{SHIPPED}
NOTES = """
Changelog for reviewers, as my tool documents it:
{FENCE}python
{CANCELLED}
{RESULT}
{FENCE}
"""
{RESULT}
'''
# The same, with the fence in comments, and in a string that is the last statement.
DECOY_IN_COMMENTS = f"# {FENCE}python\n# {CANCELLED}\n# {RESULT}\n# {FENCE}\n{SHIPPED}\n{RESULT}\n"
DECOY_AT_THE_END = f"{SHIPPED}\n{RESULT}\n'''\n{FENCE}\n{CANCELLED}\n{RESULT}\n{FENCE}'''\n"

# What a chatty model answers: prose around a fence. Only the fence is code.
CHATTY = f"Here is the script:\n\n{FENCE}python\n{CANCELLED}\n{RESULT}\n{FENCE}\n\nIt ships it.\n"


def edit(client, submission_id, body: str):
    """Send the page's edit form: the editor's text and the tools its panel showed."""
    form = {"body": body, "note": "", "tools_seen": ["update_order_status"], "tools_seen_sent": "1"}
    return client.post(f"/reviews/{submission_id}/edit/", form)


def page_of(client, submission_id) -> str:
    response = client.get(f"/reviews/{submission_id}/")
    assert response.status_code == 200
    return response.content.decode()


def run_of(submission_id, worker) -> Run:
    submission = Submission.objects.get(pk=submission_id)
    run = Run.objects.get(pk=submission.run_id)
    worker.future(run.pk).result(timeout=240)
    run.refresh_from_db()
    return run


@pytest.mark.parametrize(
    "body",
    [DECOY_IN_A_STRING, DECOY_IN_COMMENTS, DECOY_AT_THE_END],
    ids=["string", "comments", "string-at-the-end"],
)
def test_a_program_with_a_fence_inside_runs_as_the_program_the_reviewer_read(
    api, ecommerce, reviewer_client, worker, body
) -> None:
    state = submit(api, ecommerce, body=body).json()
    assert state["status"] == SubmissionStatus.PENDING, state
    page = page_of(reviewer_client, state["id"])
    assert "shipped" in page and "data-answer-differs" not in page

    answer = reviewer_client.post(f"/reviews/{state['id']}/approve/", {"note": "ok"})
    assert answer.status_code in (200, 302)
    assert Submission.objects.get(pk=state["id"]).status == SubmissionStatus.APPROVED
    run = run_of(state["id"], worker)
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.result == {"status": "shipped"}


def test_the_page_shows_only_the_fenced_code_of_a_chatty_answer_and_that_is_what_runs(
    api, ecommerce, reviewer_client, worker
) -> None:
    state = submit(api, ecommerce, body=CHATTY).json()
    page = page_of(reviewer_client, state["id"])
    script = page.split("data-script-scroll>", 1)[1].split("</pre>", 1)[0]
    assert "cancelled" in script and "Here is the script" not in script
    assert "2 lines of python, as it runs" in page
    assert "data-answer-differs" in page and "data-answer-as-sent" in page
    # The editor starts from the code that runs, not from the prose.
    editor = html.unescape(page.split("data-edit-body", 1)[1].split("</textarea>", 1)[0])
    assert "Here is the script" not in editor and CANCELLED in editor

    reviewer_client.post(f"/reviews/{state['id']}/approve/", {"note": "ok"})
    run = run_of(state["id"], worker)
    assert run.result == {"status": "cancelled"}


@pytest.mark.parametrize("newlines", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_sending_the_editor_back_unchanged_is_a_plain_approval(
    api, ecommerce, reviewer_client, worker, newlines
) -> None:
    state = submit(api, ecommerce, body=CHATTY).json()
    body = f"{CANCELLED}\n{RESULT}\n".replace("\n", newlines)
    edit(reviewer_client, state["id"], body)
    submission = Submission.objects.get(pk=state["id"])
    assert submission.status == SubmissionStatus.APPROVED  # not "edited and approved"
    assert submission.approved_sha256 == submission.code_sha256
    assert run_of(state["id"], worker).result == {"status": "cancelled"}


def test_an_edit_of_a_chatty_answer_is_diffed_against_the_code_that_ran_before(
    api, ecommerce, reviewer_client, worker
) -> None:
    state = submit(api, ecommerce, body=CHATTY).json()
    edited = f"{SHIPPED}\n{RESULT}\n"
    edit(reviewer_client, state["id"], edited)
    submission = Submission.objects.get(pk=state["id"])
    assert submission.status == SubmissionStatus.EDITED_AND_APPROVED
    assert run_of(state["id"], worker).result == {"status": "shipped"}
    page = page_of(reviewer_client, state["id"])
    diff = page.split("data-edit-diff", 1)[1].split("</section>", 1)[0]
    assert "Here is the script" not in diff and "It ships it" not in diff
    assert "cancelled" in diff and "shipped" in diff
