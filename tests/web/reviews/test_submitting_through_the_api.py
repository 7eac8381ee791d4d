from __future__ import annotations

import pytest

from jazzmine_web.reviews.models import AuditEntry, Submission

from .conftest import submit

pytestmark = pytest.mark.django_db


def test_a_clean_script_waits_for_review_with_the_tools_it_calls(api, ecommerce, member) -> None:
    response = submit(api, ecommerce, prompt="You write Python...")
    assert response.status_code == 201
    state = response.json()
    assert state["status"] == "pending"
    assert state["final"] is False and state["decided"] is False
    assert state["violations"] == []
    assert state["tools_called"] == [
        {
            "name": "get_orders",
            "kind": "python",
            "always_allow": False,
            "secrets": [],
            # The code the reading was made against: an approval covers that code only.
            "code_digest": ecommerce.tools.get(name="get_orders").code_digest,
            "certain": True,
            "why": "called on line 1",
        }
    ]
    assert state["agent"] == {"token": "ci-bot", "name": "agent ci-bot (ada)"}
    submission = Submission.objects.get(pk=state["id"])
    assert submission.prompt == "You write Python..."
    assert submission.expires_at is not None


def test_a_script_with_violations_is_answered_at_once_and_recorded(api, ecommerce) -> None:
    response = submit(api, ecommerce, body="import os\nemit_result(os.listdir('/'))\n")
    assert response.status_code == 201
    state = response.json()
    assert state["status"] == "rejected_by_validator"
    assert state["final"] is True
    assert state["violations"] and state["violations"][0].startswith("Line 1:")
    assert "import" in state["previous_error"]
    actions = list(
        AuditEntry.objects.filter(submission_id=state["id"])
        .order_by("pk")
        .values_list("action", flat=True)
    )
    assert actions == ["submitted", "rejected_by_validator"]


def test_violation_lines_are_counted_in_the_body(api, ecommerce) -> None:
    body = 'x = 1\ny = 2\nopen("/etc/passwd")\nemit_result(x)\n'
    state = submit(api, ecommerce, body=body).json()
    assert any(v.startswith("Line 3:") for v in state["violations"]), state["violations"]


def test_an_aliased_tool_counts_as_called(api, ecommerce) -> None:
    body = 'f = get_user\nemit_result(f("U-1").data)\n'
    state = submit(api, ecommerce, body=body).json()
    assert [t["name"] for t in state["tools_called"]] == ["get_user"]
    assert state["tools_called"][0]["certain"] is False
    assert "used as a value" in state["tools_called"][0]["why"]


def test_missing_fields_get_the_stable_error_shape(api, ecommerce) -> None:
    response = api.post(
        "/api/v1/submissions/",
        {"sandbox": ecommerce.pk, "task": "x"},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json() == {
        "error": {"code": "missing_field", "message": "'body' is required and may not be empty."}
    }


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({"task": "t", "body": "emit_result(1)"}, "missing_field"),
        ({"sandbox": 1, "task": "t", "body": 5}, "invalid_field"),
        ({"sandbox": 1, "task": "t", "body": "emit_result(1)", "attempt": 0}, "invalid_field"),
        ({"sandbox": 1, "task": "t", "body": "emit_result(1)", "attempt": "2"}, "invalid_field"),
    ],
)
def test_bad_fields_are_refused_and_nothing_is_stored(api, ecommerce, payload, code) -> None:
    if "sandbox" in payload:
        payload["sandbox"] = ecommerce.pk
    response = api.post("/api/v1/submissions/", payload, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code
    assert Submission.objects.count() == 0


def test_a_body_that_is_not_json_is_refused(api, ecommerce) -> None:
    response = api.post("/api/v1/submissions/", "{nope", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_json"


def test_a_sandbox_can_be_named_team_slash_name(api, ecommerce) -> None:
    payload = {"sandbox": "shop/ecommerce", "task": "t", "body": "emit_result(1)"}
    response = api.post("/api/v1/submissions/", payload, content_type="application/json")
    assert response.status_code == 201
    assert response.json()["sandbox"] == {"id": ecommerce.pk, "team": "shop", "name": "ecommerce"}


def test_a_retry_names_its_previous_attempt(api, ecommerce) -> None:
    first = submit(api, ecommerce, body="import os\n").json()
    second = submit(api, ecommerce, attempt=2, previous=first["id"]).json()
    assert second["attempt"] == 2 and second["previous_id"] == first["id"]


def test_an_unknown_previous_attempt_is_refused(api, ecommerce) -> None:
    response = submit(api, ecommerce, previous="not-a-uuid")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "previous_not_found"


def test_the_status_endpoint_answers_what_submit_answered(api, ecommerce) -> None:
    state = submit(api, ecommerce).json()
    polled = api.get(f"/api/v1/submissions/{state['id']}/")
    assert polled.status_code == 200
    assert polled.json()["status"] == "pending"
