"""A person's Run asks once whether they may use the sandbox, and its attempt takes no
savepoint: each read and savepoint was a round trip to the database on the way to the run's
first event. The one check still refuses an outsider, and a run made later (the Auto loop's,
which outlives its start) asks again."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from jazzmine_web.playground.consumers import PlaygroundError, _run_started
from jazzmine_web.playground.models import Attempt
from jazzmine_web.playground.services import (
    PlaygroundForbidden,
    attempt_record,
    attempt_run,
    session_open,
)
from jazzmine_web.runs.models import Run
from jazzmine_web.teams.models import Membership

pytestmark = pytest.mark.django_db(transaction=True)

BODY = "emit_result({'ok': True})\n"


def _started(user, sandbox_id, body=BODY):
    return _run_started(
        user=user,
        sandbox_id=sandbox_id,
        body=body,
        session_id=None,
        task="count",
        attempt_id=None,
        language="python",
    )


def _reads_of(queries, table: str) -> int:
    return sum(f'FROM "{table}"' in q["sql"] for q in queries)


def test_a_run_reads_the_sandbox_and_the_membership_once(ecommerce, member):
    _started(member, ecommerce.pk)  # the first of a process reads what it keeps
    with CaptureQueriesContext(connection) as seen:
        attempt, pane = _started(member, ecommerce.pk, body=BODY + "# again\n")
    queries = seen.captured_queries
    assert attempt.run_id is not None and pane
    assert _reads_of(queries, "catalog_sandbox") == 1
    assert _reads_of(queries, "teams_membership") == 1
    # One savepoint: the run's own (its failure must not end a caller's transaction).
    assert sum(q["sql"].startswith("SAVEPOINT") for q in queries) == 1
    run = Run.objects.get(pk=attempt.run_id)
    assert (run.sandbox_id, run.created_by_id, run.allowed_tools) == (ecommerce.pk, member.pk, None)


def test_an_outsider_is_refused_and_nothing_is_stored(ecommerce, outsider):
    with pytest.raises(PlaygroundError, match="no such sandbox"):
        _started(outsider, ecommerce.pk)
    assert not Run.objects.exists() and not Attempt.objects.exists()


def test_a_member_who_left_is_refused_at_the_next_run(ecommerce, member):
    first, _pane = _started(member, ecommerce.pk)
    Membership.objects.filter(user=member).delete()
    with pytest.raises(PlaygroundError, match="no such sandbox"):
        _started(member, ecommerce.pk, body=BODY + "# after\n")
    assert list(Run.objects.values_list("pk", flat=True)) == [first.run_id]


def test_a_later_run_asks_again_unless_given_the_sandbox_just_checked(
    ecommerce, empty_sandbox, member
):
    session = session_open(user=member, sandbox=ecommerce, task="count")
    attempt = attempt_record(session=session, source="llm", body=BODY)
    Membership.objects.filter(user=member).delete()
    # The loop's run, long after its start: asked again, refused.
    with pytest.raises(PlaygroundForbidden):
        attempt_run(attempt=attempt, user=member)
    # A sandbox checked for another session's sandbox is no check of this one.
    with pytest.raises(PlaygroundForbidden):
        attempt_run(attempt=attempt, user=member, checked=empty_sandbox)
    assert not Run.objects.exists()
