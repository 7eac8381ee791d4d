"""When the platform fails a run (engine down, worker lost), agents are not told to fix the script."""

from __future__ import annotations

import pytest

from jazzmine.sandbox import Outcome
from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_approve
from jazzmine_web.runs.models import RunStatus
from jazzmine_web.runs.services import run_fail

from .conftest import submit

pytestmark = pytest.mark.django_db


def decided_and_failed(api, ecommerce, reviewer, *, outcome: Outcome, message: str) -> dict:
    state = submit(api, ecommerce).json()
    submission = Submission.objects.get(pk=state["id"])
    submission_approve(submission=submission, user=reviewer)
    submission.refresh_from_db()
    run_fail(run_id=submission.run_id, outcome=outcome, message=message)
    return api.get(f"/api/v1/submissions/{state['id']}/").json()


@pytest.mark.parametrize(
    ("outcome", "message"),
    [
        (Outcome.ENGINE_UNAVAILABLE, "Docker engine unavailable: connection refused"),
        (Outcome.WORKER_LOST, "the worker executing this run (w1@host) stopped answering"),
        (Outcome.BUILD_FAILED, "pip could not download rich==99"),
    ],
)
def test_a_platform_failure_is_an_infrastructure_error_not_a_previous_error(
    api, ecommerce, reviewer, outcome, message
):
    state = decided_and_failed(api, ecommerce, reviewer, outcome=outcome, message=message)
    assert state["run"]["status"] == RunStatus.FAILED
    assert state["previous_error"] is None
    assert message in state["infrastructure_error"]


def test_a_script_error_is_still_the_next_prompts_previous_error(api, ecommerce, reviewer):
    state = decided_and_failed(
        api, ecommerce, reviewer, outcome=Outcome.SCRIPT_ERROR, message="KeyError: 0"
    )
    assert "KeyError: 0" in state["previous_error"]
    assert state["infrastructure_error"] is None
