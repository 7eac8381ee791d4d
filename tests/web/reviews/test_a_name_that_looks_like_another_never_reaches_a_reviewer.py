"""A Python name that a page draws like another name is refused before any reviewer reads it.

Python takes letters of every alphabet in names: `stаtus` (with a Cyrillic `а`) and `status`
are two variables that look the same. A reviewer reading `status = "pending"` just above
`update_order_status(order_id=..., status=stаtus)` approved setting the order to pending; the
run cancelled it. Names must be ASCII as the interpreter reads them (a fullwidth `ｇet_orders`
is `get_orders`, as it runs); text in other alphabets stays welcome in strings and comments.
"""

from __future__ import annotations

import pytest

from jazzmine_web.reviews.models import Submission, SubmissionStatus
from jazzmine_web.reviews.services import EditRefused, submission_approve
from jazzmine_web.runs.models import Run

from .conftest import submit

pytestmark = pytest.mark.django_db

CYRILLIC_A = "\u0430"
DECOY = (
    f'st{CYRILLIC_A}tus = "cancelled"\n'
    'status = "pending"\n'
    f'r = update_order_status(order_id="ORD-1003", status=st{CYRILLIC_A}tus)\n'
    "emit_result(r.data)\n"
)
SPELLINGS = {
    "a variable": (DECOY, [1, 3]),
    "a function": (
        f"def {CYRILLIC_A}dd(x):\n    return x\nemit_result({CYRILLIC_A}dd(1))\n",
        [1, 3],
    ),
    "a keyword argument": (f'emit_result(get_orders(st{CYRILLIC_A}tus="delivered").data)\n', [1]),
    "an attribute": (f"r = get_orders()\nemit_result(r.d{CYRILLIC_A}ta)\n", [2]),
    "a parameter": (f"f = lambda {CYRILLIC_A}: 1\nemit_result(f(1))\n", [1]),
    "a Greek letter": ("\u03bc = 1\nemit_result(\u03bc)\n", [1, 2]),
}


@pytest.mark.parametrize("case", list(SPELLINGS))
def test_a_name_beyond_ascii_is_refused_on_its_lines(api, gated, case) -> None:
    body, lines = SPELLINGS[case]
    state = submit(api, gated, body=body).json()
    assert state["status"] == SubmissionStatus.REJECTED_BY_VALIDATOR, state
    named = [v for v in state["violations"] if "beyond ASCII" in v]
    assert [int(v.split(":")[0].removeprefix("Line ")) for v in named] == lines, named
    assert Run.objects.count() == 0


def test_a_reviewer_edit_with_one_is_refused(api, gated, reviewer) -> None:
    state = submit(api, gated).json()
    with pytest.raises(EditRefused) as refused:
        submission_approve(
            submission=Submission.objects.get(pk=state["id"]), user=reviewer, body=DECOY
        )
    assert any("U+0430" in v for v in refused.value.violations)
    assert Run.objects.count() == 0


def test_a_look_alike_that_runs_as_the_name_it_looks_like_is_fine(api, gated) -> None:
    # NFKC makes the fullwidth letter the ASCII one, in the reading and in the run alike.
    body = 'emit_result(\uff47et_orders(status="delivered").data)\n'
    state = submit(api, gated, body=body).json()
    assert state["status"] == SubmissionStatus.PENDING and not state["violations"], state


def test_other_alphabets_in_strings_and_comments_are_fine(api, gated) -> None:
    body = (
        "# Заказы и их статус\n"
        'orders = get_orders(status="delivered")\n'
        'emit_result({"сумма": len(orders.data["orders"]), "note": "stаtus"})\n'
    )
    assert submit(api, gated, body=body).json()["status"] == SubmissionStatus.PENDING
