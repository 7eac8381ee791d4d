"""Compare names the task each attempt was made for, and prints no unit without a number.

A session held only its latest task: editing the Task box and running again wrote over it,
and Compare of attempts 1 and 4 was headed "restart test task (edited)" where attempt 1 had
been generated for "List the first pending order". Its empty timings read "– s", and a run
that never timed read "worker_lost ms".
"""

from __future__ import annotations

import re

import pytest

from jazzmine_web.playground.models import AttemptSource
from jazzmine_web.playground.services import attempt_record, attempt_run, session_open
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create

pytestmark = pytest.mark.django_db

FIRST = "List the first pending order"
EDITED = "restart test task (edited)"


def llm_attempt(session, body: str = "emit_result(1)\n", **fields):
    return attempt_record(
        session=session, source=AttemptSource.LLM, prompt=f"Task:\n{session.task}\n", body=body,
        **fields,
    )  # fmt: skip


def compare(client, user, session, a: int, b: int) -> str:
    client.force_login(user)
    response = client.get(f"/playground/sessions/{session.pk}/compare/?a={a}&b={b}")
    assert response.status_code == 200
    return response.content.decode()


def test_attempts_of_an_edited_task_each_show_their_own(client, member, ecommerce) -> None:
    session = session_open(user=member, sandbox=ecommerce, task=FIRST)
    llm_attempt(session)
    # The page sends the Task box's text with the next Generate or Run: the session's changes.
    session = session_open(user=member, sandbox=ecommerce, session_id=session.pk, task=EDITED)
    llm_attempt(session, body="emit_result(2)\n")

    html = compare(client, member, session, 1, 2)
    row = re.search(r'<tr id="compare-tasks">(.*?)</tr>', html, re.S)
    assert row is not None, "the attempts' tasks differ: each is named in its column"
    assert re.findall(r"<td>(.*?)</td>", row[1]) == [FIRST, EDITED]
    assert 'id="compare-task"' not in html  # nothing names one task for both


def test_attempts_of_one_task_name_it_once_in_the_heading(client, member, ecommerce) -> None:
    session = session_open(user=member, sandbox=ecommerce, task=FIRST)
    llm_attempt(session)
    llm_attempt(session, body="emit_result(2)\n")
    session_open(user=member, sandbox=ecommerce, session_id=session.pk, task=EDITED)

    html = compare(client, member, session, 1, 2)
    assert f'<span id="compare-task">{FIRST}</span>' in html
    assert 'id="compare-tasks"' not in html and EDITED not in html


def test_an_llm_script_run_after_the_task_changed_runs_for_its_own(member, ecommerce) -> None:
    session = session_open(user=member, sandbox=ecommerce, task=FIRST)
    attempt = llm_attempt(session)
    session_open(user=member, sandbox=ecommerce, session_id=session.pk, task=EDITED)
    attempt.session.refresh_from_db()

    ran = attempt_run(attempt=attempt, user=member)
    assert ran.run is not None and ran.run.task == FIRST


def test_empty_timings_print_no_unit(client, member, ecommerce) -> None:
    session = session_open(user=member, sandbox=ecommerce, task=FIRST)
    timed = llm_attempt(session, generation_seconds=1.25)
    lost = llm_attempt(session, body="emit_result(2)\n")  # a generation nothing timed
    for attempt, duration in ((timed, 812.0), (lost, None)):
        run = run_create(sandbox=ecommerce, user=member, body=attempt.body, start=False)
        Run.objects.filter(pk=run.pk).update(
            status=RunStatus.FAILED, outcome="worker_lost", duration_ms=duration
        )
        type(attempt).objects.filter(pk=attempt.pk).update(run=run)

    html = compare(client, member, session, 1, 2)
    generation = re.search(r"<tr><th>Generation</th>(.*?)</tr>", html, re.S)[1]
    assert re.findall(r"<td>(.*?)</td>", generation) == ["1.25 s", "–"]
    runs = re.search(r"<tr><th>Run</th>(.*?)</tr>", html, re.S)[1]
    assert "worker_lost 812 ms" in runs
    assert "worker_lost ms" not in runs and "worker_lost</td>" in runs


@pytest.mark.django_db(transaction=True)
def test_attempts_stored_before_get_the_task_their_prompt_quotes(client, member, ecommerce):
    """Playground migration 0004 takes an old attempt's task only where its prompt quotes it,
    or a person's run took it from the session in the same request; the others read "not
    recorded", never the session's latest task."""
    from tests.web.helpers import migrate

    ran = run_create(
        sandbox=ecommerce, user=member, body="emit_result(1)\n", task=FIRST, start=False
    )
    old = migrate(("playground", "0003_attempt_stopped"))
    try:
        Session = old.get_model("playground", "PlaygroundSession")
        Attempt = old.get_model("playground", "Attempt")
        session = Session.objects.create(user_id=member.pk, sandbox_id=ecommerce.pk, task=EDITED)
        retry = f"Your previous script failed.\n\nTask:\n{FIRST}\n\nAvailable tools:\n..."
        Attempt.objects.create(
            session=session, number=1, source="llm", prompt=f"Tools...\n\nTask:\n{FIRST}\n",
            run_id=ran.pk,
        )  # fmt: skip
        # Generated for the task attempt 1 ran for: the session held it.
        Attempt.objects.create(session=session, number=2, source="llm", prompt=retry)
        Attempt.objects.create(session=session, number=3, source="llm", prompt="")
        # The session's latest task, but only as a prefix of what the prompt quotes.
        Attempt.objects.create(
            session=session, number=4, source="llm", prompt=f"Task:\n{EDITED}, and more\n"
        )
        Attempt.objects.create(session=session, number=5, source="llm", prompt=f"Task:\n{EDITED}\n")
    finally:
        migrate()

    from jazzmine_web.playground.models import Attempt as Now

    tasks = dict(Now.objects.filter(session_id=session.pk).values_list("number", "task"))
    assert tasks == {1: FIRST, 2: FIRST, 3: None, 4: None, 5: EDITED}
    html = compare(client, member, session, 3, 5)
    row = re.search(r'<tr id="compare-tasks">(.*?)</tr>', html, re.S)[1]
    assert '<span class="muted">not recorded</span>' in row and EDITED in row
