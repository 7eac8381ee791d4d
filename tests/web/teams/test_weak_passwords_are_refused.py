"""A password people are given or choose in the admin is refused when it is easy to guess.

Login throttling slows guessing one username from one address; it does nothing for a password
found in the first guesses of every list, and staff who manage accounts set passwords for
others. Length alone let "password", "12345678" and the username itself through.
"""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

GUESSABLE = [
    "password",
    "  Password  ",  # the common-password list is matched whatever the case and spaces
    "12345678",
    "3141592653589",  # digits only
    "qwertyuiop",
    "newcomer1",  # the username, barely changed
]


@pytest.fixture
def root(django_user_model) -> Client:
    admin = django_user_model.objects.create_superuser(username="root", password="x" * 12)
    client = Client()
    client.force_login(admin)
    return client


def add_user(client: Client, username: str, password: str):
    """Post the admin's add-user form as a browser does."""
    form = {"username": username, "password1": password, "password2": password}
    return client.post("/admin/auth/user/add/", {**form, "usable_password": "true"})


@pytest.mark.parametrize("password", GUESSABLE)
def test_a_new_account_cannot_get_a_guessable_password(root, django_user_model, password):
    response = add_user(root, "newcomer", password)
    assert response.status_code == 200  # the form again, with the reason
    assert not django_user_model.objects.filter(username="newcomer").exists()


@pytest.mark.parametrize("password", [*GUESSABLE[:5], "ada-lovelace"])
def test_an_account_cannot_be_given_a_guessable_password(root, django_user_model, password):
    ada = django_user_model.objects.create_user(
        username="ada", password="correct horse battery", first_name="Ada", last_name="Lovelace"
    )
    response = root.post(
        f"/admin/auth/user/{ada.pk}/password/", {"password1": password, "password2": password}
    )
    assert response.status_code == 200
    ada.refresh_from_db()
    assert ada.check_password("correct horse battery")


def test_a_hard_password_is_still_taken(root, django_user_model):
    password = "violet-harbour-57-kettles"
    response = add_user(root, "newcomer", password)
    assert response.status_code == 302
    assert django_user_model.objects.get(username="newcomer").check_password(password)
