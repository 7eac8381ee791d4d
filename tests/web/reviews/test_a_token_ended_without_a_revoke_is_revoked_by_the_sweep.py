"""A token a write around the models ended is revoked by the sweep, and its work with it.

A password changed by a queryset update (or SQL, or a new server key), or an account
deactivated that way, saves no user: no receiver revokes the tokens. Each token is bound to the
password it was made under, so it already opens nothing; but its list said "active", its
pending submissions waited for a reviewer, whose approval ran them, and its webhook stayed set.
Now the list says it ended, an approval of what it sent is refused, and a beat sweep revokes
it as its owner's revoke would (its submissions withdrawn, its webhook off). The sweep revokes
only a token found ended twice, a moment apart: a login upgrading a password's hash writes the
new hash before it binds the tokens to it, and a token read in between is not ended.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.test import Client

import jazzmine.net as net
import jazzmine_web.teams.services as team_services
from jazzmine_web.reviews.models import Submission, SubmissionStatus, WebhookEndpoint
from jazzmine_web.reviews.services import submission_approve
from jazzmine_web.reviews.services.errors import ReviewConflict
from jazzmine_web.teams.models import ApiToken, RevokeReason
from jazzmine_web.teams.services import api_token_create, api_tokens_rebind, api_tokens_settle
from tests.waiting import wait_until

from .conftest import submit

pytestmark = pytest.mark.django_db


def pending(api, sandbox) -> Submission:
    state = submit(api, sandbox).json()
    assert state["status"] == "pending", state
    return Submission.objects.get(pk=state["id"])


def token_list(user) -> str:
    user.refresh_from_db()
    browser = Client()
    browser.force_login(user)
    return browser.get("/account/tokens/").content.decode()


def password_written_around_the_models(user) -> None:
    get_user_model().objects.filter(pk=user.pk).update(password=make_password("other-pw-9931"))


def test_a_bulk_password_update_ends_the_token_its_list_and_its_work(
    api, gated, issued, member, reviewer, monkeypatch
) -> None:
    monkeypatch.setattr(net, "resolve", lambda host, port: ["93.184.216.34"])
    hook = api.put("/api/v1/webhook/", {"url": "https://agent.example/hook"}, "application/json")
    assert hook.status_code == 200, hook.content
    waiting = pending(api, gated)

    password_written_around_the_models(member)

    assert api.get("/api/v1/sandboxes/").status_code == 401  # as before: it opens nothing
    page = token_list(member)
    assert "ended (the password or the server&#x27;s key changed" in page, page
    with pytest.raises(ReviewConflict) as refused:
        submission_approve(submission=waiting, user=reviewer)
    assert refused.value.code == "token_ended"
    waiting.refresh_from_db()
    assert waiting.status == SubmissionStatus.PENDING and waiting.run is None

    assert api_tokens_settle(recheck_after=0) == 1
    token = ApiToken.objects.get(pk=issued.token.pk)
    assert token.revoked_at is not None and token.revoked_reason == RevokeReason.UNBOUND
    waiting.refresh_from_db()
    assert waiting.status == SubmissionStatus.WITHDRAWN, waiting.feedback
    assert not WebhookEndpoint.objects.get(api_token=token).active
    page = token_list(member)
    assert "revoked" in page and "ended (" not in page
    assert api_tokens_settle(recheck_after=0) == 0  # once


def test_the_webhook_page_shows_the_ended_token_and_sets_it_no_webhook(
    api, issued, member, monkeypatch
) -> None:
    monkeypatch.setattr(net, "resolve", lambda host, port: ["93.184.216.34"])
    hook = api.put("/api/v1/webhook/", {"url": "https://agent.example/hook"}, "application/json")
    assert hook.status_code == 200, hook.content
    password_written_around_the_models(member)
    member.refresh_from_db()
    browser = Client()
    browser.force_login(member)
    page = browser.get("/reviews/webhooks/").content.decode()
    assert "data-token-ended" in page and "agent.example/hook" in page, page
    assert 'name="url"' not in page  # no form offering to set what can never be sent
    again = browser.post(
        "/reviews/webhooks/", {"token": issued.token.pk, "url": "https://agent.example/b"}
    )
    assert again.status_code == 422
    assert "This token has ended" in again.content.decode()
    assert WebhookEndpoint.objects.get(api_token=issued.token).url == "https://agent.example/hook"


def test_a_bulk_deactivation_is_revoked_as_a_deactivation(api, gated, issued, member) -> None:
    waiting = pending(api, gated)
    get_user_model().objects.filter(pk=member.pk).update(is_active=False)
    assert api_tokens_settle(recheck_after=0) == 1
    token = ApiToken.objects.get(pk=issued.token.pk)
    assert token.revoked_reason == RevokeReason.DEACTIVATED
    waiting.refresh_from_db()
    assert waiting.status == SubmissionStatus.WITHDRAWN


def test_tokens_that_open_are_left_alone_without_waiting(member, issued, monkeypatch) -> None:
    api_token_create(user=member, name="second")
    slept = []
    monkeypatch.setattr(team_services.time, "sleep", slept.append)
    assert api_tokens_settle() == 0
    assert slept == []  # nothing found ended: no pause either
    assert not ApiToken.objects.filter(revoked_at__isnull=False).exists()


def test_a_token_bound_again_before_the_second_look_stays(member, issued, monkeypatch) -> None:
    """What a login's hash upgrade looks like to the sweep: the hash first, the binding next."""
    old_hash = get_user_model().objects.get(pk=member.pk).password
    password_written_around_the_models(member)  # the upgrade's first write

    def upgrade_finishes(_seconds: float) -> None:
        member.refresh_from_db()
        assert api_tokens_rebind(user=member, old_password_hash=old_hash) == 1

    monkeypatch.setattr(team_services.time, "sleep", upgrade_finishes)
    assert api_tokens_settle() == 0
    assert ApiToken.objects.get(pk=issued.token.pk).revoked_at is None
    assert (
        Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}").get("/api/v1/sandboxes/").status_code
        == 200
    )


def test_a_server_key_rotated_with_its_fallback_ends_nothing(issued, settings) -> None:
    settings.SECRET_KEY_FALLBACKS = [settings.SECRET_KEY]
    settings.SECRET_KEY = "a-new-server-key-" + "x" * 50
    assert api_tokens_settle(recheck_after=0) == 0
    settings.SECRET_KEY_FALLBACKS = []  # the old key dropped: every token it bound ends
    assert api_tokens_settle(recheck_after=0) == 1
    assert ApiToken.objects.get(pk=issued.token.pk).revoked_reason == RevokeReason.UNBOUND


@pytest.mark.django_db(transaction=True)
def test_the_beat_sweep_revokes_it_without_anyone_asking(
    api, gated, issued, member, celery_workers
) -> None:
    celery_workers.running({"JAZZMINE_TOKENS_SETTLE_SECONDS": "0.5"}, beat=True)
    waiting = pending(api, gated)
    password_written_around_the_models(member)
    wait_until(
        lambda: ApiToken.objects.get(pk=issued.token.pk).revoked_at is not None,
        timeout=20,
        message="the sweep never revoked the token",
    )
    waiting.refresh_from_db()
    assert waiting.status == SubmissionStatus.WITHDRAWN
