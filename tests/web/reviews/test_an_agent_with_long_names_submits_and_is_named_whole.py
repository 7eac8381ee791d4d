"""An agent whose token name and owner's username are as long as they may be still submits.

Its label ("agent <token> (<owner>)") is stored with the submission and in the audit trail,
in 200-character columns; the longest names made 259, which PostgreSQL refuses (a server
error for the agent) and SQLite stored whole. The token's name is shortened, the owner's
name never: they are the one accountable.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.reviews.models import AuditEntry, Submission
from jazzmine_web.reviews.services.audit import AGENT_LABEL_CHARS
from jazzmine_web.teams.services import api_token_create
from tests.web.helpers import teammate

from .conftest import submit

pytestmark = pytest.mark.django_db


def test_the_longest_names_are_stored_with_the_owner_whole(team, ecommerce) -> None:
    owner = teammate(team, "member", username="o" * 149 + "x")
    token = api_token_create(user=owner, name="t" * 99 + "z")
    response = submit(Client(HTTP_AUTHORIZATION=f"Bearer {token.raw}"), ecommerce)
    assert response.status_code == 201, response.content
    submission = Submission.objects.get(pk=response.json()["id"])
    label = submission.agent_name
    assert len(label) <= AGENT_LABEL_CHARS
    assert label.startswith("agent ttt") and label.endswith(f"… ({owner.username})")
    entry = AuditEntry.objects.filter(submission=submission).first()
    assert entry is not None and len(entry.actor_label) <= AGENT_LABEL_CHARS
    assert response.json()["agent"]["name"] == label


def test_a_short_name_is_kept_as_it_is(api, issued, ecommerce, member) -> None:
    state = submit(api, ecommerce).json()
    assert state["agent"]["name"] == f"agent {issued.token.name} ({member.username})"
