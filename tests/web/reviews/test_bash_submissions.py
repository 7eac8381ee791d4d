from __future__ import annotations

import pytest

from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_approve
from jazzmine_web.runs.models import RunStatus

from .conftest import submit

pytestmark = pytest.mark.django_db(transaction=True)

BASH = """\
get_orders --status delivered | jq '[.orders[].price] | add' > /dev/null
get_user --user_id U-1 | jq -r .name
"""


def test_a_bash_script_is_reviewed_with_the_builtins_it_calls(api, ecommerce) -> None:
    state = submit(api, ecommerce, body=BASH, language="bash").json()
    assert state["status"] == "pending" and state["language"] == "bash"
    assert [t["name"] for t in state["tools_called"]] == ["get_orders", "get_user"]
    assert Submission.objects.get(pk=state["id"]).script == BASH  # bash runs as written


def test_an_unknown_language_is_refused_with_the_stable_error_shape(api, ecommerce) -> None:
    response = submit(api, ecommerce, language="ruby")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_field"
    assert "language" in response.json()["error"]["message"]


@pytest.mark.docker
def test_an_approved_bash_script_runs_in_the_sandbox(api, ecommerce, reviewer, worker) -> None:
    state = submit(api, ecommerce, body=BASH, language="bash").json()
    submission = submission_approve(
        submission=Submission.objects.get(pk=state["id"]), user=reviewer
    )
    run = submission.run
    worker.future(run.pk).result(timeout=240)
    run.refresh_from_db()
    assert run.language == "bash" and run.status == RunStatus.SUCCEEDED, run.error
    assert "Ada Lovelace" in run.result["stdout"]
    assert run.code_sha256 == submission.approved_sha256
