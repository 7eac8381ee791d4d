from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from jazzmine.agent_client import AgentClient, ApiError, review_loop
from jazzmine_web.reviews.models import ReviewPolicy, Submission
from jazzmine_web.reviews.services import submission_approve, submission_reject

from .conftest import set_policy

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

GOOD = 'orders = get_orders(status="delivered")\nemit_result({"n": len(orders.data["orders"])})\n'


def reviewer_bot(reviewer, stop: threading.Event) -> None:
    """Reject the first script that reaches a human, approve the next."""
    decided = 0
    try:
        while not stop.is_set() and decided < 2:
            for submission in Submission.objects.filter(status="pending").order_by("created_at"):
                if decided == 0:
                    submission_reject(
                        submission=submission, user=reviewer, feedback="Only delivered orders."
                    )
                else:
                    submission_approve(submission=submission, user=reviewer)
                decided += 1
            time.sleep(0.1)
    finally:
        connection.close()


def test_the_loop_retries_with_violations_then_feedback_then_succeeds(
    live_server, issued, ecommerce, reviewer, worker
) -> None:
    prompts: list[str] = []
    answers = iter(["import os\nemit_result(1)\n", "emit_result(get_orders().data)\n", GOOD])

    def write(prompt: str) -> str:
        prompts.append(prompt)
        return f"```python\n{next(answers)}```"

    stop = threading.Event()
    bot = threading.Thread(target=reviewer_bot, args=(reviewer, stop))
    bot.start()
    try:
        with AgentClient(live_server.url, issued.raw) as client:
            sandbox = client.sandbox("shop/ecommerce")
            outcome = review_loop(
                client,
                sandbox=sandbox,
                task="Count delivered orders",
                write=write,
                wait_timeout=180,
            )
    finally:
        stop.set()
        bot.join()
    statuses = [a.state["status"] for a in outcome.attempts]
    assert statuses == ["rejected_by_validator", "rejected", "approved"]
    assert outcome.succeeded and outcome.result == {"n": 2}
    assert "import" in prompts[1]  # the violations became previous_error
    assert "Only delivered orders." in prompts[2]  # so did the reviewer's feedback
    chain = [a.state["previous_id"] for a in outcome.attempts]
    assert chain == [None, outcome.attempts[0].state["id"], outcome.attempts[1].state["id"]]


def test_the_client_raises_the_stable_error(live_server, issued, ecommerce) -> None:
    with AgentClient(live_server.url, issued.raw) as client:
        with pytest.raises(ApiError) as error:
            client.submit(sandbox=ecommerce.pk, task="", body="emit_result(1)")
    assert error.value.status == 400 and error.value.code == "missing_field"


def test_the_client_withdraws_a_pending_submission_once(live_server, issued, ecommerce) -> None:
    set_policy(ecommerce, ReviewPolicy.ALWAYS)
    with AgentClient(live_server.url, issued.raw) as client:
        created = client.submit(sandbox=ecommerce.pk, task="t", body="emit_result(1)\n")
        assert created["status"] == "pending"
        state = client.withdraw(created["id"], reason="a better script is coming")
        assert state["status"] == "withdrawn" and state["final"] is True
        assert state["feedback"].endswith(": a better script is coming")
        with pytest.raises(ApiError) as error:
            client.withdraw(created["id"])
    assert error.value.status == 409 and error.value.code == "not_pending"


def test_the_loop_stops_when_another_of_its_processes_withdraws(
    live_server, issued, ecommerce
) -> None:
    set_policy(ecommerce, ReviewPolicy.ALWAYS)
    stop = threading.Event()

    def withdrawer() -> None:
        with AgentClient(live_server.url, issued.raw) as other:
            while not stop.is_set():
                for submission in Submission.objects.filter(status="pending"):
                    other.withdraw(str(submission.pk), reason="superseded")
                    return
                time.sleep(0.05)
        connection.close()

    thread = threading.Thread(target=withdrawer)
    thread.start()
    try:
        with AgentClient(live_server.url, issued.raw) as client:
            outcome = review_loop(
                client,
                sandbox=client.sandbox(ecommerce.pk),
                task="count orders",
                write=lambda _prompt: GOOD,
                max_attempts=3,
                wait_timeout=30,
            )
    finally:
        stop.set()
        thread.join(10)
    assert [a.state["status"] for a in outcome.attempts] == ["withdrawn"]
    assert not outcome.succeeded


def test_the_client_sends_a_bash_script_whole(live_server, issued, ecommerce) -> None:
    # A bash script is all body: a line that reads like Python's preamble marker cuts nothing
    # (what a reviewer reads and approves is what runs). A Python script is still cut there.
    bash = 'get_user --user_id 1\n# --- script body ---\nupdate_order_status --order_id ORD-1001 --status cancelled\n'  # fmt: skip
    python = "emit_result(0)\n# --- script body ---\nemit_result(1)\n"
    with AgentClient(live_server.url, issued.raw) as client:
        sent_bash = client.submit(sandbox=ecommerce.pk, task="t", body=bash, language="bash")
        sent_python = client.submit(sandbox=ecommerce.pk, task="t", body=python)
    assert Submission.objects.get(pk=sent_bash["id"]).body == bash
    assert Submission.objects.get(pk=sent_python["id"]).body == "emit_result(1)\n"
