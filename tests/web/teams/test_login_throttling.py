"""Repeated failed logins lock a username out from one address for the cool-off period."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

RIGHT = "correct horse battery"  # the `user` fixture's password


def attempt(client: Client, username: str, password: str):
    return client.post("/login/", {"username": username, "password": password})


def test_the_sixth_try_is_refused_even_with_the_right_password(user, settings) -> None:
    assert settings.AXES_FAILURE_LIMIT == 5
    client = Client()
    for _ in range(4):
        assert attempt(client, "ada", "wrong").status_code == 200
    locked = attempt(client, "ada", "wrong again")  # the fifth failure starts the lock
    assert locked.status_code == 429
    assert "locked" in locked.content.decode()
    right = attempt(client, "ada", RIGHT)
    assert right.status_code == 429
    assert "Too many failed logins" in right.content.decode()
    assert "_auth_user_id" not in client.session


def test_a_different_user_from_the_same_address_is_not_locked(user, django_user_model) -> None:
    django_user_model.objects.create_user(username="grace", password="another good one")
    client = Client()
    for _ in range(6):
        attempt(client, "ada", "wrong")
    response = attempt(client, "grace", "another good one")
    assert response.status_code == 302


def test_the_same_user_from_another_address_is_not_locked(user) -> None:
    for _ in range(6):
        attempt(Client(REMOTE_ADDR="10.0.0.1"), "ada", "wrong")
    response = attempt(Client(REMOTE_ADDR="10.0.0.2"), "ada", RIGHT)
    assert response.status_code == 302


def test_a_success_before_the_limit_starts_the_count_again(user) -> None:
    client = Client()
    for _ in range(4):
        attempt(client, "ada", "wrong")
    assert attempt(client, "ada", RIGHT).status_code == 302
    client.logout()
    for _ in range(4):
        attempt(client, "ada", "wrong")
    assert attempt(client, "ada", RIGHT).status_code == 302


def test_the_lock_ends_after_the_cool_off(user, settings) -> None:
    import datetime

    from axes.models import AccessAttempt

    client = Client()
    for _ in range(5):
        attempt(client, "ada", "wrong")
    assert attempt(client, "ada", RIGHT).status_code == 429
    AccessAttempt.objects.update(attempt_time=datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC))
    assert attempt(client, "ada", RIGHT).status_code == 302


def test_programmatic_logins_are_not_throttled(logged_in, user) -> None:
    assert logged_in.get("/").status_code == 200
    assert Client().login(username="ada", password=RIGHT)
