"""A playground address that names a missing session or attempt says which is missing.

Every one read "Nothing is at /playground/, or nothing you may see": the playground was there,
the session was not; and on a real session's Compare, attempt 9 (or no attempt at all) was
missing, not the page. Another person's session still reads exactly as one that never was.
"""

from __future__ import annotations

import re
import uuid

import pytest

from jazzmine_web.playground.models import AttemptSource
from jazzmine_web.playground.services import attempt_record, session_open

pytestmark = pytest.mark.django_db

NO_SESSION = "You have no playground session with the id this address names"


@pytest.fixture
def session(ecommerce, member):
    session = session_open(user=member, sandbox=ecommerce, task="Show the first order")
    for body in ("emit_result(1)\n", "emit_result(2)\n"):
        attempt_record(session=session, source=AttemptSource.LLM, body=body)
    return session


def not_found(client, url: str) -> str:
    """Return what the 404 page says (its card: the navigation's form token differs)."""
    response = client.get(url)
    assert response.status_code == 404, url
    card = re.search(r'<section class="card narrow" id="not-found">.*?</section>', response.content.decode(), re.S)  # fmt: skip
    assert card is not None
    return card[0]


@pytest.mark.parametrize("value", [str(uuid.uuid4()), "garbage"])
def test_an_unknown_session_is_named_not_the_playground(client, member, session, value) -> None:
    client.force_login(member)
    card = not_found(client, f"/playground/?session={value}")
    assert NO_SESSION in card and "Nothing is at" not in card
    assert '<a href="/playground/" data-back>Open the playground</a>' in card


def test_another_persons_session_reads_as_one_that_never_was(
    client, member, outsider, session
) -> None:
    client.force_login(outsider)
    theirs = {
        path: not_found(client, path.format(session.pk))
        for path in (
            "/playground/?session={}",
            "/playground/sessions/{}/compare/?a=1&b=2",
            "/playground/sessions/{}/compare/?a=1&b=9",
        )
    }
    nobodys = {
        path: not_found(client, path.format(uuid.uuid4()))
        for path in theirs
    }  # fmt: skip
    assert list(theirs.values()) == list(nobodys.values())
    assert all(NO_SESSION in card for card in theirs.values())


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("?a=1&b=9", "This session has no attempt 9: its attempts are numbered 1 to 2."),
        ("?a=7&b=9", "This session has no attempt 7 or attempt 9: its attempts are numbered"),
        ("?a=x&b=2", "Compare names its two attempts by number (?a=1&amp;b=2): a is not a number."),
        ("?a=x", "a and b are not numbers"),
        ("", "Compare needs the numbers of two attempts of this session"),
    ],
)
def test_compare_of_a_real_session_says_which_attempt_is_missing(
    client, member, session, query, says
) -> None:
    client.force_login(member)
    card = not_found(client, f"/playground/sessions/{session.pk}/compare/{query}")
    assert says in card and "Nothing is at" not in card
    assert f'<a href="/playground/?session={session.pk}" data-back>Back to the session</a>' in card


def test_other_missing_pages_still_say_nothing_is_there(client, member) -> None:
    client.force_login(member)
    card = not_found(client, "/catalog/tools/999999/")
    assert "Nothing is at <code>/catalog/tools/999999/</code>" in card
    assert "data-missing" not in card
