from __future__ import annotations

import html

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from jazzmine_web.teams import forms
from jazzmine_web.teams.models import ApiToken
from jazzmine_web.teams.services import (
    TokenNameTaken,
    api_token_create,
    api_token_revoke,
    hash_token,
)
from tests.web.helpers import migrate

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"  # the `user` fixture's: making a token asks for it


def test_a_new_token_is_shown_once_and_stored_hashed(logged_in, user) -> None:
    response = logged_in.post("/account/tokens/", {"name": "support agent", "password": PASSWORD})
    html = response.content.decode()
    token = ApiToken.objects.get(user=user)
    raw = html.split('<code id="new-token">')[1].split("</code>")[0]
    assert raw.startswith("jzm_") and len(raw) > 40
    assert token.token_hash == hash_token(raw) and raw not in token.token_hash
    assert raw not in logged_in.get("/account/tokens/").content.decode()
    assert token.prefix in logged_in.get("/account/tokens/").content.decode()


def test_htmx_gets_the_token_list_partial(logged_in) -> None:
    response = logged_in.post(
        "/account/tokens/", {"name": "x", "password": PASSWORD}, HTTP_HX_REQUEST="true"
    )
    assert response.content.decode().lstrip().startswith('<section class="card" id="token-list">')


def test_a_user_revokes_their_own_token_but_not_others(logged_in, user, django_user_model) -> None:
    logged_in.post("/account/tokens/", {"name": "mine", "password": PASSWORD})
    other = django_user_model.objects.create_user(username="bob", password="x" * 12)
    theirs = ApiToken.objects.create(
        user=other, name="theirs", prefix="jzm_ab", token_hash="h" * 64
    )
    mine = ApiToken.objects.get(user=user)
    # Another's, or none at all, is not found: a redirect back to the list looked revoked.
    for pk in (theirs.pk, 999_999, 10**22):
        assert logged_in.post(f"/account/tokens/{pk}/revoke/").status_code == 404
    logged_in.post(f"/account/tokens/{mine.pk}/revoke/")
    theirs.refresh_from_db()
    mine.refresh_from_db()
    assert theirs.is_active and not mine.is_active
    assert "revoked" in logged_in.get("/account/tokens/").content.decode()
    again = logged_in.post(f"/account/tokens/{mine.pk}/revoke/", follow=True)
    assert "That token was revoked already." in again.content.decode()


@pytest.mark.parametrize("htmx", [False, True], ids=["form", "htmx"])
def test_a_name_longer_than_a_token_keeps_is_refused_and_says_so(logged_in, user, htmx) -> None:
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    # Past what the column holds: PostgreSQL refused it with a 500, SQLite stored it whole.
    response = logged_in.post(
        "/account/tokens/", {"name": "a" * 101, "password": PASSWORD}, **headers
    )
    assert response.status_code == 422
    html = response.content.decode()
    assert "The token was not created: its name ensure this value has at most 100" in html
    assert 'id="new-token"' not in html
    assert not ApiToken.objects.filter(user=user).exists()
    # The longest name there is room for, padded as a paste would be: kept, stripped.
    response = logged_in.post(
        "/account/tokens/", {"name": f" {'a' * 100}\n", "password": PASSWORD}, **headers
    )
    assert response.status_code == 200 and 'id="new-token"' in response.content.decode()
    assert ApiToken.objects.get(user=user).name == "a" * 100


def test_a_second_live_token_of_one_name_is_refused_and_blank_ones_are_numbered(
    logged_in, user
) -> None:
    # Reviewers saw "agent agent1 (demo)" for both of two tokens named alike.
    made = logged_in.post("/account/tokens/", {"name": "agent1", "password": PASSWORD})
    assert made.status_code == 200 and ApiToken.objects.filter(user=user).count() == 1
    again = logged_in.post("/account/tokens/", {"name": " agent1 ", "password": PASSWORD})
    assert again.status_code == 422
    said = html.unescape(again.content.decode())
    assert "The token was not created: its name is already another live token's" in said
    assert 'value=" agent1 "' in said  # what was typed stays
    assert ApiToken.objects.filter(user=user).count() == 1
    # Once that one is revoked, the name is free again.
    first = ApiToken.objects.get(user=user)
    logged_in.post(f"/account/tokens/{first.pk}/revoke/")
    assert (
        logged_in.post("/account/tokens/", {"name": "agent1", "password": PASSWORD}).status_code
        == 200
    )
    for _ in range(3):
        logged_in.post("/account/tokens/", {"name": "", "password": PASSWORD})
    names = sorted(
        ApiToken.objects.filter(user=user, revoked_at__isnull=True).values_list("name", flat=True)
    )
    assert names == ["agent1", "token", "token 2", "token 3"]


def test_the_database_holds_a_live_tokens_name_for_a_shell_and_a_request_at_once(
    logged_in, user, monkeypatch
) -> None:
    # The page's check alone let a token made from a shell repeat a live token's name.
    api_token_create(user=user, name="agent1")
    for spelling in ("agent1", " agent1", "agent1\n"):
        with pytest.raises(TokenNameTaken, match="'agent1' is already another live token's"):
            api_token_create(user=user, name=spelling)
    with pytest.raises(IntegrityError), transaction.atomic():
        ApiToken.objects.create(user=user, name="agent1", prefix="jzm_x", token_hash="h" * 64)
    # Two requests at once: both pass the form's check, the second is refused in words.
    monkeypatch.setattr(forms, "api_token_names_live", lambda user: set())
    again = logged_in.post("/account/tokens/", {"name": "agent1", "password": PASSWORD})
    assert again.status_code == 422
    said = html.unescape(again.content.decode())
    assert "The token was not created: its name is already another live token's" in said
    assert 'id="new-token"' not in said
    assert ApiToken.objects.filter(user=user).count() == 1
    # Another person's tokens and revoked ones leave the name free.
    other = get_user_model().objects.create_user(username="bob", password="x" * 12)
    assert api_token_create(user=other, name="agent1").token.name == "agent1"
    api_token_revoke(user=user, token_id=ApiToken.objects.get(user=user).pk)
    assert api_token_create(user=user, name="agent1").token.name == "agent1"


@pytest.mark.django_db(transaction=True)
def test_tokens_of_one_name_stored_before_the_upgrade_are_numbered_and_still_open(user) -> None:
    old = migrate(("teams", "0003_revoke_reason_unbound"))
    try:
        Token = old.get_model("teams", "ApiToken")
        for n, name in enumerate(["agent", "agent", "agent", "other", "agent (2)"]):
            Token.objects.create(user_id=user.pk, name=name, prefix="jzm_", token_hash=f"{n}" * 64)
        Token.objects.create(
            user_id=user.pk, name="agent", prefix="jzm_", token_hash="r" * 64,
            revoked_at=timezone.now(),
        )  # fmt: skip
    finally:
        migrate()
    live = ApiToken.objects.filter(revoked_at__isnull=True).order_by("pk")
    names = [t.name for t in live]
    assert len(set(names)) == len(names) == 5, names
    assert names[2] == "agent"  # the newest "agent" keeps its name
    assert {"other", "agent (2)"} <= set(names)
    assert ApiToken.objects.filter(token_hash="0" * 64, revoked_at__isnull=True).exists()
    assert ApiToken.objects.get(token_hash="r" * 64).name == "agent"  # revoked: untouched
