"""A password change ends the API tokens made under the old password, whatever path changed it.

A password is changed because it, or a session, leaked; the change signs out every other
session, and it must end the tokens too: a token minted by whoever held the session kept
submitting scripts, reading the team's runs and hearing its webhook after the owner had
"locked the leak out". The owner's page, the admin's form for another person, `set_password`
in code: each revokes the tokens (their webhooks stop, their list says why). A change that
saves no user (a queryset update) revokes nothing, and still ends them: each token is bound to
the password it was made under. A token made after the change works; a rehash of the same
password (a hasher upgrade, on login) ends nothing.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.test import Client

import jazzmine.net as net
from jazzmine_web.reviews.models import WebhookEndpoint
from jazzmine_web.teams.models import ApiToken
from jazzmine_web.teams.services import api_token_create, hash_token
from tests.web.helpers import migrate

pytestmark = pytest.mark.django_db(transaction=True)

OLD = "correct horse battery"  # the `user` fixture's password
NEW = "violet-harbour-57-kettles"
TOKEN = re.compile(r"jzm_[A-Za-z0-9_\-]{20,}")


def agent(raw: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


def opens(raw: str) -> int:
    """Return the status of an agent's first call with this token."""
    return agent(raw).get("/api/v1/sandboxes/").status_code


def token_list(user) -> str:
    user.refresh_from_db()  # its new password: a session of the old one is signed out
    browser = Client()
    browser.force_login(user)
    return browser.get("/account/tokens/").content.decode()


def test_a_token_minted_by_a_stolen_session_dies_with_the_password_change(
    member, ecommerce, monkeypatch
) -> None:
    victim = Client()
    assert victim.post("/login/", {"username": "ada", "password": OLD}).status_code == 302
    thief = Client()
    thief.cookies["sessionid"] = victim.cookies["sessionid"].value
    # The session and the password taken together (a phishing page asks for both): the page
    # makes the token; the owner's change of password is what must end it.
    page = thief.post("/account/tokens/", {"name": "backup", "password": OLD})
    raw = TOKEN.search(page.content.decode()).group(0)
    monkeypatch.setattr(net, "resolve", lambda host, port: ["93.184.216.34"])
    hook = {"url": "https://thief.example/hook"}
    set_hook = agent(raw).put("/api/v1/webhook/", hook, content_type="application/json")
    assert set_hook.status_code == 200, set_hook.content
    assert opens(raw) == 200

    form = {"old_password": OLD, "new_password1": NEW, "new_password2": NEW}
    assert victim.post("/account/password/", form).status_code == 302

    assert opens(raw) == 401
    assert not WebhookEndpoint.objects.get().active  # revoked through the service
    assert "revoked" in token_list(member) and "the password was changed" in token_list(member)


@pytest.mark.parametrize("usable", [True, False], ids=["new password", "password disabled"])
def test_an_admin_setting_someones_password_ends_their_tokens(
    member, django_user_model, usable
) -> None:
    raw = api_token_create(user=member, name="ci-bot").raw
    root = django_user_model.objects.create_superuser(username="root", password="x" * 12)
    admin = Client()
    admin.force_login(root)
    form = {"usable_password": "true", "password1": NEW, "password2": NEW}
    if not usable:
        form = {"usable_password": "false", "unset-password": "1"}
    response = admin.post(f"/admin/auth/user/{member.pk}/password/", form)
    assert response.status_code == 302
    assert response["Location"] == f"/admin/auth/user/{member.pk}/change/"
    assert opens(raw) == 401
    token = ApiToken.objects.get()
    assert token.revoked_at is not None and token.revoked_reason == "password"


def test_set_password_in_code_ends_the_tokens(member) -> None:
    # As a management command or a service does (`seed_demo --reset`, `changepassword`).
    raw = api_token_create(user=member, name="ci-bot").raw
    user = get_user_model().objects.get(pk=member.pk)
    user.set_password(NEW)
    user.save()
    assert opens(raw) == 401
    assert ApiToken.objects.get().revoked_reason == "password"


def test_a_password_written_past_save_still_ends_the_tokens(member) -> None:
    """No signal hears a queryset update: the binding to the password ends the token."""
    raw = api_token_create(user=member, name="ci-bot").raw
    get_user_model().objects.filter(pk=member.pk).update(password=make_password(NEW))
    assert opens(raw) == 401


def test_the_token_made_after_the_change_works(member, ecommerce) -> None:
    owner = Client()
    owner.force_login(member)
    old = TOKEN.search(
        owner.post("/account/tokens/", {"name": "old", "password": OLD}).content.decode()
    ).group(0)
    form = {"old_password": OLD, "new_password1": NEW, "new_password2": NEW}
    assert owner.post("/account/password/", form).status_code == 302
    page = owner.post("/account/tokens/", {"name": "new", "password": NEW}).content.decode()
    new = TOKEN.search(page).group(0)
    assert opens(old) == 401
    assert opens(new) == 200
    assert [t.is_active for t in ApiToken.objects.order_by("pk")] == [False, True]


def test_a_rehash_of_the_same_password_on_login_ends_no_token(member, settings) -> None:
    """Django rehashes a password on login when its hasher changes (every release raises
    PBKDF2's rounds): the password is the same, and the agents must not stop with it."""
    raw = api_token_create(user=member, name="ci-bot").raw
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.ScryptPasswordHasher",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]
    assert Client().post("/login/", {"username": "ada", "password": OLD}).status_code == 302
    member.refresh_from_db()
    assert member.password.startswith("scrypt$")  # rehashed
    assert opens(raw) == 200
    assert ApiToken.objects.get().is_active


def test_a_token_made_before_the_upgrade_works_until_the_password_changes(member) -> None:
    """Teams migration 0002 binds the tokens there are to the passwords of today: an empty
    binding opens nothing, and every agent would have stopped on the upgrade."""
    old = migrate(("teams", "0001_initial"))
    try:
        raw = "jzm_made-before-the-upgrade-0123456789"
        old.get_model("teams", "ApiToken").objects.create(
            user_id=member.pk, name="old", prefix=raw[:10], token_hash=hash_token(raw)
        )
    finally:
        migrate()
    assert opens(raw) == 200
    member.set_password(NEW)
    member.save()
    assert opens(raw) == 401
