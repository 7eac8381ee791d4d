"""No invisible or reordering character makes the review page show other code than runs.

A reviewer decides on the script as the page draws it. Some characters are drawn as nothing
(or move the text around them) while the interpreter reads them: a form feed in a Python
line's indentation resets its column to 0, so a call drawn inside an `if` (or a loop over
nothing) runs unconditionally; bidi controls (Trojan Source, CVE-2021-42574) draw code in
another order than it runs; zero-width characters, line separators and other control or
format characters make text differ from what is shown. Such a script is refused with the
validator's violations, from the agent's API, from a reviewer's edit and from the playground
alike; written as an escape inside a string, the same character is fine.
"""

from __future__ import annotations

import pytest

from jazzmine_web.playground.services import attempt_record, attempt_run, session_open
from jazzmine_web.reviews.models import Submission, SubmissionStatus
from jazzmine_web.reviews.services import EditRefused, submission_approve
from jazzmine_web.runs.models import Run

from .conftest import BODY, submit

pytestmark = pytest.mark.django_db

# Drawn: a loop over the orders in a status none has, and the cancel inside it. Run: the
# form feed resets the column, so the cancel is a statement of its own after the loop.
FORM_FEED = (
    'orders = get_orders().data["orders"]\n'
    "changed = []\n"
    'for o in [o for o in orders if o["status"] == "no-such-status"]:\n'
    '    changed.append(o["id"])\n'
    '    \x0cchanged.append(update_order_status(order_id=orders[0]["id"], status="cancelled").data)\n'
    'emit_result({"changed": changed})\n'
)
# Trojan Source's stretched string: drawn as a comparison with a comment after it.
BIDI = (
    'access = "user"\n'
    'if access != "none\u202e \u2066# admins only\u2069 \u2066":\n'
    "    emit_result(get_orders().data)\n"
)
CASES = {
    "form feed in the indentation": (FORM_FEED, 5, "U+000C"),
    "right-to-left override": (BIDI, 2, "U+202E"),
    "zero-width space in a string": (
        'emit_result(get_orders(status="deli\u200bvered").data)\n',
        1,
        "U+200B",
    ),
    "line separator in a comment": ("# note\u2028emit_result(1)\nemit_result(2)\n", 1, "U+2028"),
    "next line in a comment": ("# note\x85emit_result(1)\nemit_result(2)\n", 1, "U+0085"),
    "byte order mark": ('emit_result("\ufeff")\n', 1, "U+FEFF"),
    "escape character": ('emit_result("\x1b[2K")\n', 1, "U+001B"),
}
BASH_CASES = {
    "bash right-to-left override": ('echo "ok\u202e"; get_orders\n', 1, "U+202E"),
    "bash form feed": ("get_orders\n\x0cget_user --user_id U-1\n", 2, "U+000C"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_python_script_with_an_invisible_character_is_refused(api, gated, case) -> None:
    body, line, code = CASES[case]
    state = submit(api, gated, body=body).json()
    assert state["status"] == SubmissionStatus.REJECTED_BY_VALIDATOR, state
    assert any(v.startswith(f"Line {line}:") and code in v for v in state["violations"]), state
    assert Run.objects.count() == 0


@pytest.mark.parametrize("case", list(BASH_CASES))
def test_a_bash_script_with_an_invisible_character_is_refused(api, gated, case) -> None:
    body, line, code = BASH_CASES[case]
    state = submit(api, gated, body=body, language="bash").json()
    assert state["status"] == SubmissionStatus.REJECTED_BY_VALIDATOR, state
    assert any(v.startswith(f"Line {line}:") and code in v for v in state["violations"]), state
    assert Run.objects.count() == 0


def test_a_reviewer_edit_with_an_invisible_character_is_refused(api, gated, reviewer) -> None:
    state = submit(api, gated).json()
    assert state["status"] == SubmissionStatus.PENDING
    with pytest.raises(EditRefused) as refused:
        submission_approve(
            submission=Submission.objects.get(pk=state["id"]), user=reviewer, body=FORM_FEED
        )
    assert any("U+000C" in v for v in refused.value.violations)
    assert Submission.objects.get(pk=state["id"]).status == SubmissionStatus.PENDING
    assert Run.objects.count() == 0


def test_the_playground_refuses_it_too(ecommerce, member) -> None:
    session = session_open(user=member, sandbox=ecommerce, task="Cancel")
    attempt = attempt_record(session=session, source="human", prompt="", body=FORM_FEED)
    attempt_run(attempt=attempt, user=member)
    assert attempt.run_id is None and any("U+000C" in v for v in attempt.violations)
    assert Run.objects.count() == 0


def test_the_same_characters_written_as_escapes_are_fine(api, gated, reviewer) -> None:
    body = 'emit_result({"rtl": "\\u202e", "ff": "\\x0c", "ok": get_orders().success})\n'
    assert submit(api, gated, body=body).json()["status"] == SubmissionStatus.PENDING
    tabs = 'for o in get_orders().data["orders"]:\n\temit_log(o["id"])\r\nemit_result(1)\n'
    assert submit(api, gated, body=tabs).json()["status"] == SubmissionStatus.PENDING
    assert submit(api, gated, body=BODY).json()["status"] == SubmissionStatus.PENDING
