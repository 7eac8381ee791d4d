"""A Python name that a page draws like another name is refused before any reviewer reads it.

Python takes letters of every alphabet in names: `stаtus` (with a Cyrillic `а`) and `status`
are two variables that look the same. A reviewer reading `status = "pending"` just above
`update_order_status(order_id=..., status=stаtus)` approved setting the order to pending; the
run cancelled it. And Python reads names in NFKC: `ᵒrder_id` (a modifier letter) is drawn as
a variable of its own below `order_id = "ORD-1001"`, and runs as `order_id`. Names must be
ASCII as they are spelt; text in other alphabets stays welcome in strings and comments.
"""

from __future__ import annotations

import pytest

from jazzmine_web.reviews.models import ReviewPolicy, Submission, SubmissionStatus
from jazzmine_web.reviews.services import EditRefused, submission_approve
from jazzmine_web.runs.models import Run

from .conftest import set_policy, submit

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
    # Read as the ASCII name (NFKC), drawn as another.
    "a modifier letter": (
        'order_id = "ORD-1001"\n'
        '\u1d52rder_id = "ORD-1003"  # ORD-1003 was refunded already\n'
        'r = update_order_status(order_id=order_id, status="cancelled")\n'
        'emit_result({"cancelled": order_id, "ok": r.success})\n',
        [2],
    ),
    "a fullwidth tool name": ('emit_result(\uff47et_orders(status="delivered").data)\n', [1]),
    "a ligature in an attribute": ("r = get_orders()\nemit_result(r.\ufb01eld)\n", [2]),
    "a field of an f-string": ('status = "x"\nemit_result(f"{\u02e2tatus}")\n', [2]),
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


def test_a_policy_that_lets_scripts_through_refuses_them_too(api, gated) -> None:
    # Under `unlisted_tools` a script calling only always-allowed tools runs unread: the name
    # it reads as `status` must not pass for another either.
    set_policy(gated, ReviewPolicy.UNLISTED_TOOLS)
    body = (
        'status = "shipped"\n\u02e2tatus = "cancelled"\n'
        "emit_result(get_orders(status=status).data)\n"
    )
    state = submit(api, gated, body=body).json()
    assert state["status"] == SubmissionStatus.REJECTED_BY_VALIDATOR, state
    assert Run.objects.count() == 0


def test_other_alphabets_in_strings_and_comments_are_fine(api, gated) -> None:
    body = (
        "# Заказы и их статус\n"
        'orders = get_orders(status="delivered")\n'
        'emit_result({"сумма": len(orders.data["orders"]), "note": "stаtus"})\n'
    )
    assert submit(api, gated, body=body).json()["status"] == SubmissionStatus.PENDING
