from __future__ import annotations

import pytest

from jazzmine_web.playground.models import AttemptSource
from jazzmine_web.playground.services import attempt_record, session_open

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(ecommerce, member):
    session = session_open(user=member, sandbox=ecommerce, task="Show the first order")
    attempt_record(
        session=session,
        source=AttemptSource.LLM,
        prompt="You write one Python script...\nTask:\nShow the first order\n",
        body="r = get_orders()\nemit_result(r.data[0])\n",
        prompt_tokens=900,
        completion_tokens=20,
        generation_seconds=1.25,
    )
    attempt_record(
        session=session,
        source=AttemptSource.LLM,
        prompt="Your previous script for this task failed (attempt 1)...\nKeyError: 0\n",
        hint="`KeyError: 0` means you indexed `r.data` with an integer.",
        previous_error="KeyError: 0",
        body="r = get_orders()\nemit_result(r.data['orders'][0])\n",
    )
    return session


def test_two_attempts_compare_side_by_side_with_diffs_hint_and_tokens(client, member, session):
    client.force_login(member)
    response = client.get(f"/playground/sessions/{session.pk}/compare/?a=1&b=2")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Attempt 1 vs attempt 2" in html
    assert '<span class="gd">-emit_result(r.data[0])</span>' in html
    assert """<span class="gi">+emit_result(r.data['orders'][0])</span>""" in html
    assert "means you indexed" in html
    assert "900" in html and "1.25" in html


def test_the_session_lists_its_attempts_with_compare_choices(client, member, session):
    client.force_login(member)
    html = client.get(f"/playground/sessions/{session.pk}/attempts/").content.decode()
    assert html.count('data-attempt="') == 2
    assert 'name="a"' in html and 'name="b"' in html


def test_another_users_session_is_not_found(client, outsider, session):
    client.force_login(outsider)
    assert client.get(f"/playground/sessions/{session.pk}/compare/?a=1&b=2").status_code == 404
    assert client.get(f"/playground/sessions/{session.pk}/attempts/").status_code == 404


def test_comparing_a_missing_attempt_is_not_found(client, member, session):
    client.force_login(member)
    assert client.get(f"/playground/sessions/{session.pk}/compare/?a=1&b=9").status_code == 404
    assert client.get(f"/playground/sessions/{session.pk}/compare/?a=x").status_code == 404


def test_a_cancelled_attempt_reads_cancelled_in_the_table(client, member, session):
    from jazzmine_web.runs.models import Run, RunStatus
    from jazzmine_web.runs.services import run_create

    attempt = session.attempts.get(number=2)
    run = run_create(sandbox=session.sandbox, user=member, body=attempt.body, start=False)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.FAILED, outcome="cancelled")
    session.attempts.filter(pk=attempt.pk).update(run=run)
    client.force_login(member)
    for url in (
        f"/playground/?session={session.pk}",
        f"/playground/sessions/{session.pk}/attempts/",
    ):
        html = client.get(url).content.decode()
        row = html[html.index('data-attempt="2"') :]
        assert 'class="badge status-cancelled">Cancelled<' in row[: row.index("</tr>")], url


def test_a_sandbox_link_that_names_no_sandbox_of_the_user_is_not_found(client, member, ecommerce):
    client.force_login(member)
    for value in ("999", "abc", "-1", "1e3"):
        response = client.get(f"/playground/?sandbox={value}")
        assert response.status_code == 404, value
        assert "no sandbox yet" not in response.content.decode()
    assert client.get(f"/playground/?sandbox={ecommerce.pk}").status_code == 200
    assert client.get("/playground/").status_code == 200


def test_recent_sessions_say_when_each_was_used_and_how_far_it_got(client, member, session):
    client.force_login(member)
    html = client.get("/playground/").content.decode()
    item = html[html.index(f'?session={session.pk}"') :]
    item = item[: item.index("</li>")]
    assert session.updated_at.strftime("%Y-%m-%d") in item and "2 attempts" in item
