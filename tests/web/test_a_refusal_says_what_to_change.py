"""A refused request answers with the status and the words that say what to change.

Found by trying the pages and the API the way a hostile or careless client does: a form that
sent more files than Django takes read "a form body it cannot parse"; a refused LLM endpoint
answered 200 (every other refused form answers 422); a member changing a review policy got
422 (a form to correct) where nothing they send would do (403); a webhook URL that was no
string was called missing; a sandbox's description had no limit at all.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import sandbox_create, sandbox_update
from jazzmine_web.catalog.services.rules import MAX_TOOL_DESCRIPTION_CHARS
from jazzmine_web.playground.models import LLMSettings
from jazzmine_web.reviews.models import SandboxReviewSettings
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import api_token_create, membership_set

pytestmark = pytest.mark.django_db

TOOL = '@tool(description="T{i}.", sandbox="many")\ndef t{i}() -> ToolResponse:\n    return 1\n'


def test_an_import_of_more_files_than_a_request_takes_names_the_limit(team, user, settings):
    membership_set(team=team, user=user, role=Role.ADMIN)
    client = Client(raise_request_exception=False)
    client.force_login(user)
    files = [
        SimpleUploadedFile(f"t{i}.py", TOOL.format(i=i).encode())
        for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FILES + 1)
    ]
    response = client.post("/catalog/import/", {"team": team.pk, "files": files})
    assert response.status_code == 400
    html = response.content.decode()
    assert f"more than {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files" in html
    assert "cannot parse" not in html and not Tool.objects.exists()


def test_a_refused_llm_endpoint_answers_422(logged_in):
    response = logged_in.post(
        "/playground/settings/", {"base_url": "file:///etc/passwd", "model": "m", "api_key": ""}
    )
    assert response.status_code == 422
    assert not LLMSettings.objects.exists()


def test_a_member_changing_a_review_policy_is_forbidden(client, member, ecommerce):
    client.force_login(member)
    response = client.post(
        f"/reviews/sandboxes/{ecommerce.pk}/policy/", {"policy": "never", "timeout_seconds": 60}
    )
    assert response.status_code == 403
    assert "Only team admins change" in response.content.decode()
    assert not SandboxReviewSettings.objects.filter(sandbox=ecommerce, policy="never").exists()


def test_an_admins_invalid_policy_is_still_a_form_to_correct(client, team, ecommerce, user):
    membership_set(team=team, user=user, role=Role.ADMIN)
    client.force_login(user)
    response = client.post(
        f"/reviews/sandboxes/{ecommerce.pk}/policy/", {"policy": "sometimes", "timeout_seconds": 60}
    )
    assert response.status_code == 422


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"url": 5}, "invalid_field"),
        ({"url": ["https://agent.example/hook"]}, "invalid_field"),
        ({"url": {"href": "https://agent.example/hook"}}, "invalid_field"),
        ({"url": True}, "invalid_field"),
        ({}, "missing_field"),
        ({"url": None}, "missing_field"),
        ({"url": "  "}, "missing_field"),
    ],
)
def test_a_webhook_url_that_is_no_string_is_invalid_not_missing(member, body, code):
    token = api_token_create(user=member, name="bot")
    agent = Client(HTTP_AUTHORIZATION=f"Bearer {token.raw}")
    response = agent.put("/api/v1/webhook/", body, content_type="application/json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == code


def test_a_sandbox_description_has_the_limit_of_a_tools(team, member, client):
    long = "d" * (MAX_TOOL_DESCRIPTION_CHARS + 1)
    with pytest.raises(ValidationError, match="at most 8,000"):
        sandbox_create(team=team, name="wordy", description=long)
    sandbox = sandbox_create(team=team, name="terse", description="short")
    with pytest.raises(ValidationError, match="at most 8,000"):
        sandbox_update(sandbox=sandbox, description=long)
    sandbox.refresh_from_db()
    assert sandbox.description == "short"
    sandbox_update(sandbox=sandbox, description="d" * MAX_TOOL_DESCRIPTION_CHARS)
