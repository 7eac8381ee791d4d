"""What the review page draws of a bash script as a comment is a comment where it runs.

The page colours bash with pygments, which starts a comment at a `#` right after a closing
quote, a `$var`, an `=`, an escaped space...; bash and bashkit start one only where `#` begins
a word. An agent's `echo "still pending: $n"#; update_order_status --order_id ORD-1003
--status cancelled` was drawn greyed out as a comment, approved beside a legitimate call of the
same tool, and cancelled the order. Such a script is now refused when it comes in, naming the
line, from the API, the playground's Run and the editor; one stored before cannot be approved.
"""

from __future__ import annotations

import pytest
from bashkit.scripted import ScriptedTool

from jazzmine_web.playground.checks import bash_check
from jazzmine_web.reviews.models import Submission, SubmissionStatus
from jazzmine_web.reviews.services import EditRefused, submission_approve
from jazzmine_web.runs.models import Run
from jazzmine_web.runs.services import RunRefused, run_create

from .conftest import submit

pytestmark = pytest.mark.django_db

CANCEL = "update_order_status --order_id ORD-1003 --status cancelled"
# Each draws `CANCEL` as part of a comment; bash runs it.
HIDDEN = {
    "after a double quote": f'echo "still pending: $n"#; {CANCEL}\n',
    "after a single quote": f"echo 'a'#b ; {CANCEL}\n",
    "after an ANSI-C string": f"echo $'a'#b ; {CANCEL}\n",
    "after a substitution": f"echo $(echo a)#b ; {CANCEL}\n",
    "after a variable": f"echo $x#b ; {CANCEL}\n",
    "after braces": f"echo ${{x}}#b ; {CANCEL}\n",
    "after an array item": f"echo ${{a[0]}}#; {CANCEL}\n",
    "after an equals sign": f"x=#; {CANCEL}\n",
    "after a number": f"echo 1#2 ; {CANCEL}\n",
    "after a bracket": f"echo [#] ; {CANCEL}\n",
    "after an escaped space": f"echo a\\ #; {CANCEL}\n",
}
# Comments that are comments: never refused.
REAL = {
    "a whole line": f"# then: {CANCEL}\nget_orders --status pending\n",
    "after a blank": f"get_orders --status pending # not: {CANCEL}\n",
    "after a semicolon": f"get_orders --status pending;# not: {CANCEL}\n",
    "a hashbang": "#!/bin/bash\nget_orders --status pending\n",
    "a length": 'x=abc; echo "${#x} $#"\n',
}
LEAD = "update_order_status --order_id ORD-1001 --status shipped\n"


def ran_in_bashkit(body: str) -> str:
    """Return what bashkit prints running `body` with `update_order_status` echoing its call."""
    tool = ScriptedTool("probe", max_commands=1000, max_loop_iterations=10, timeout_seconds=10)
    shell = 'update_order_status() { echo CALLED "$@"; }\n'
    return tool.execute_sync(shell + body).stdout


@pytest.mark.parametrize("body", HIDDEN.values(), ids=HIDDEN.keys())
def test_code_drawn_as_a_comment_is_refused_when_it_comes_in(api, ecommerce, member, body):
    # What the refusal is about: bashkit runs the call the page would grey out.
    assert "CALLED --order_id ORD-1003" in ran_in_bashkit(body)
    for _ in range(2):  # and sent again
        state = submit(api, ecommerce, body=LEAD + body, language="bash").json()
        assert state["status"] == "rejected_by_validator", state
        assert "Line 2: this `#` does not begin a word" in str(state["violations"])
    with pytest.raises(RunRefused, match="Line 2: this `#` does not begin a word"):
        run_create(sandbox=ecommerce, user=member, body=LEAD + body, language="bash")
    assert not Run.objects.exists()
    # The editor says so as it is typed.
    (violation,) = bash_check(LEAD + body, 100_000, ["update_order_status"]).violations
    assert violation["line"] == 2 and "starts no comment in bash" in violation["message"]


@pytest.mark.parametrize("body", REAL.values(), ids=REAL.keys())
def test_a_real_comment_is_never_refused(api, ecommerce, body):
    assert "CALLED --order_id ORD-1003" not in ran_in_bashkit(body)
    state = submit(api, ecommerce, body=body, language="bash").json()
    assert state["status"] == "pending", state


def test_a_script_stored_before_the_check_is_not_approved(api, ecommerce, reviewer):
    state = submit(api, ecommerce, body=LEAD + "echo ok\n", language="bash").json()
    submission = Submission.objects.get(pk=state["id"])
    # As a submission stored by a version without the check holds it.
    hidden = LEAD + HIDDEN["after a double quote"]
    Submission.objects.filter(pk=submission.pk).update(body=hidden, script=hidden)
    submission.refresh_from_db()
    with pytest.raises(EditRefused) as refused:
        submission_approve(submission=submission, user=reviewer)
    assert "this `#` does not begin a word" in str(refused.value)
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.PENDING and submission.run is None


def test_the_tools_panel_names_every_line_that_calls_a_tool(api, ecommerce, reviewer_client):
    # A second call of a tool the panel lists already for a first, harmless one: the page
    # points at both lines, not only at "called as a command".
    body = LEAD + 'n=$(get_orders --status pending | jq length)\necho "$n"\n' + CANCEL + "\n"
    state = submit(api, ecommerce, body=body, language="bash").json()
    assert state["status"] == "pending", state
    submission = Submission.objects.get(pk=state["id"])
    (update,) = (t for t in submission.tools_called if t["name"] == "update_order_status")
    assert update["why"] == "called as a command on lines 1, 4"
    page = reviewer_client.get(f"/reviews/{submission.pk}/").content.decode()
    assert "called as a command on lines 1, 4" in page


def test_among_thousands_of_real_comments_the_one_that_runs_is_named() -> None:
    from jazzmine_web.studio.drawn import comments_that_run

    notes = "".join(f"echo {n} # note {n}\n" for n in range(3000))
    body = notes + HIDDEN["after a double quote"] + "# the end\n"
    (problem,) = comments_that_run(body)
    assert problem.startswith("Line 3001: this `#` does not begin a word")
    assert comments_that_run(notes) == []
