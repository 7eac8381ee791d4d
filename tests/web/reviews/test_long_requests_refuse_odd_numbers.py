"""The long-poll and the event stream answer odd numbers and ids with a clear 4xx, never a hang."""

from __future__ import annotations

import uuid

import pytest

from .conftest import submit

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(
    "value",
    [
        "nan",
        "NaN",
        "-1",
        "-0.5",
        "inf",
        "-inf",
        "1e309",
        "1e1",
        "0x10",
        "",
        "1_0",
        "١٠",
        " 1",
        "1 ",
        "+1",
        "1.5.5",
    ],
)
def test_an_odd_wait_timeout_is_refused(api, ecommerce, value):
    state = submit(api, ecommerce).json()
    response = api.get(f"/api/v1/submissions/{state['id']}/wait/", {"timeout": value})
    if value == "":  # empty: the default
        assert response.status_code == 200 and response.json()["id"] == state["id"]
        return
    assert response.status_code == 400
    assert "timeout" in response.json()["error"]["message"]


@pytest.mark.parametrize("value", ["nan", "-5", "inf", "1e309", "abc", "١٠", "1_0", "9" * 40])
def test_an_odd_stream_position_is_refused(api, ecommerce, value):
    state = submit(api, ecommerce).json()
    response = api.get(f"/api/v1/submissions/{state['id']}/events/", {"after": value})
    assert response.status_code == 400
    assert "after" in response.json()["error"]["message"]


@pytest.mark.parametrize("path", ["wait/", "events/", ""])
def test_an_unknown_or_foreign_submission_is_not_found(api, path):
    response = api.get(f"/api/v1/submissions/{uuid.uuid4()}/{path}", {"timeout": "0"})
    assert response.status_code == 404


def test_a_plain_number_is_taken(api, ecommerce):
    state = submit(api, ecommerce).json()
    response = api.get(f"/api/v1/submissions/{state['id']}/wait/", {"timeout": "0.250"})
    assert response.status_code == 200 and response.json()["timed_out"] is True
