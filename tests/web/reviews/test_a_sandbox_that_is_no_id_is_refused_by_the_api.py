"""An agent's 'sandbox' that no column can hold (10**20, 2**63) or that is no id (true, 1.5,
"²", " 7") is refused with the reason, never looked up; nothing is stored."""

from __future__ import annotations

import pytest

from jazzmine_web.reviews.models import Submission
from tests.web.reviews.conftest import submit

pytestmark = pytest.mark.django_db


class Ref:
    def __init__(self, value: object) -> None:
        self.pk = value


@pytest.mark.parametrize(
    ("value", "status", "code"),
    [
        (10**20, 404, "sandbox_not_found"),
        (2**63, 404, "sandbox_not_found"),
        ("99999999999999999999", 404, "sandbox_not_found"),
        ("\u00b2", 404, "sandbox_not_found"),
        (" 7", 404, "sandbox_not_found"),
        (-1, 404, "sandbox_not_found"),
        (True, 400, "invalid_field"),
        (False, 400, "invalid_field"),
        (1.5, 400, "invalid_field"),
        ([1], 400, "invalid_field"),
        (None, 400, "missing_field"),
    ],
    ids=repr,
)
def test_the_api_refuses_it(api, ecommerce, value, status, code) -> None:
    response = submit(api, Ref(value))
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    assert not Submission.objects.exists()
    assert submit(api, ecommerce).status_code == 201  # the same agent, a real id
