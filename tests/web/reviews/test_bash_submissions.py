from __future__ import annotations

import pytest

from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_approve
from jazzmine_web.runs.models import RunStatus, code_sha256

from .conftest import approve_form, set_policy, submit

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


# A line that reads like the marker the Python preamble ends with, in the agent's own bash.
MARKED = """\
echo "step one runs first"
update_order_status --order_id ORD-1005 --status cancelled
# --- script body ---
get_orders --status delivered > /dev/null
"""


def test_a_bash_script_is_read_approved_and_run_whole(api, ecommerce, reviewer_client) -> None:
    # A bash script is all body: cut at a line like Python's preamble marker, the reviewer
    # read, approved and ran only what followed it (and an edit diffed against that).
    set_policy(ecommerce)
    state = submit(api, ecommerce, body=MARKED, language="bash").json()
    url = f"/reviews/{state['id']}/"
    page = reviewer_client.get(url).content.decode()
    assert "step one runs first" in page and "ORD-1005" in page
    assert "Markdown code fence" not in page
    assert reviewer_client.post(f"{url}approve/", approve_form(page)).status_code == 302
    submission = Submission.objects.get(pk=state["id"])
    assert submission.status == "approved" and not submission.was_edited
    assert submission.approved_script == MARKED
    assert submission.approved_sha256 == submission.code_sha256
    run = submission.run
    assert (run.script, run.body_offset) == (MARKED, 0)


def test_a_lone_carriage_return_ends_a_line_for_the_reading_the_page_and_the_checksum(
    api, ecommerce
) -> None:
    # bash reads `\r` as part of a line, every page as its end: what runs is what is drawn.
    body = "# read-only report\rupdate_order_status --order_id ORD-1001 --status cancelled\r\n"
    state = submit(api, ecommerce, body=body, language="bash").json()
    stored = Submission.objects.get(pk=state["id"])
    plain = "# read-only report\nupdate_order_status --order_id ORD-1001 --status cancelled\n"
    assert stored.body == stored.script == plain
    assert state["code_sha256"] == code_sha256(plain) == stored.code_sha256
    assert [t["name"] for t in state["tools_called"]] == ["update_order_status"]
