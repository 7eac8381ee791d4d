"""Password guessing that stays under the per-address limit is locked by the wider counts.

One username tried from many addresses (a botnet), or many usernames tried from one address
(password spraying), each staying under the five failures of one username from one address.
A person whose username is under attack still logs in from where they logged in before.
"""

from __future__ import annotations

import datetime

import pytest
from axes.models import AccessAttempt
from django.test import Client

pytestmark = pytest.mark.django_db

RIGHT = "correct horse battery"  # the `user` fixture's password (username "ada")


def attempt(address: str, username: str, password: str):
    return Client(REMOTE_ADDR=address).post("/login/", {"username": username, "password": password})


def spread_over_addresses(username: str, failures: int, *, net: str = "203.0.113") -> None:
    """Fail `failures` times on one username, four tries per address (under the pair limit)."""
    for n in range(failures):
        attempt(f"{net}.{n // 4 + 1}", username, f"guess-{n}")


def test_one_username_guessed_from_many_addresses_is_locked(user, settings) -> None:
    assert settings.JAZZMINE_LOGIN_USERNAME_FAILURE_LIMIT == 20
    spread_over_addresses("ada", 19)
    assert attempt("198.51.100.7", "ada", RIGHT).status_code == 302  # under the limit
    assert attempt("192.0.2.1", "ada", "guess-19").status_code == 429  # the 20th starts it
    locked = attempt("198.51.100.8", "ada", RIGHT)
    assert locked.status_code == 429
    assert "Too many failed logins for this username:" in locked.content.decode()


def test_the_lock_spares_an_address_the_person_logged_in_from(user) -> None:
    assert attempt("198.51.100.20", "ada", RIGHT).status_code == 302  # home, before the attack
    spread_over_addresses("ada", 24)
    assert attempt("198.51.100.21", "ada", RIGHT).status_code == 429  # a new address
    assert attempt("198.51.100.20", "ada", RIGHT).status_code == 302  # home still works
    # ... and home is no way around the lock for the attacker: the pair limit holds there.
    for n in range(5):
        attempt("198.51.100.20", "ada", f"wrong-{n}")
    assert attempt("198.51.100.20", "ada", RIGHT).status_code == 429


def test_spellings_of_one_username_count_as_that_username(user) -> None:
    # The login form strips and NFKC-normalises a username before checking it: these are all
    # "ada" to the password check, so they are all "ada" to the lock.
    for spelling in ("ada", " ada", "ada ", "\tada\n", "ａｄａ"):
        assert attempt("203.0.113.50", spelling, "wrong").status_code in (200, 429)
    assert attempt("203.0.113.50", "ada", RIGHT).status_code == 429


def test_spraying_many_usernames_from_one_address_is_locked(user, settings) -> None:
    assert settings.JAZZMINE_LOGIN_ADDRESS_FAILURE_LIMIT == 20
    for n in range(19):
        assert attempt("203.0.113.99", f"someone{n}", "Summer2026!").status_code == 200
    # A username never tried from there: the address-wide count is not reached yet.
    assert attempt("203.0.113.99", "ada", RIGHT).status_code == 302
    assert attempt("203.0.113.99", "someone19", "Summer2026!").status_code == 429  # the 20th
    locked = attempt("203.0.113.99", "grace", "Summer2026!")
    assert locked.status_code == 429
    assert "Too many failed logins from your address:" in locked.content.decode()
    # The lock holds for every username not logged in from there, with the right password too.
    assert attempt("203.0.113.99", "nobody", "whatever").status_code == 429
    # ada logged in from this address before the spraying: she still can.
    assert attempt("203.0.113.99", "ada", RIGHT).status_code == 302
    # Another address is not locked by it.
    assert attempt("203.0.113.100", "grace", "wrong").status_code == 200


def test_the_sprayer_logging_into_their_own_account_clears_nothing(user, django_user_model) -> None:
    django_user_model.objects.create_user(username="mallory", password="mallory's own one")
    django_user_model.objects.create_user(username="grace", password="another good one")
    address = "203.0.113.77"
    for n in range(19):
        attempt(address, f"victim{n}", "Winter2026!")
    # A successful login clears its own pair's failures, not the address's nor the username's.
    assert attempt(address, "mallory", "mallory's own one").status_code == 302
    attempt(address, "victim19", "Winter2026!")
    assert attempt(address, "grace", "another good one").status_code == 429
    assert attempt(address, "mallory", "mallory's own one").status_code == 302  # her address


def test_a_person_logging_in_clears_nothing_tried_on_them_from_elsewhere(user) -> None:
    spread_over_addresses("ada", 16)
    assert attempt("198.51.100.30", "ada", RIGHT).status_code == 302
    spread_over_addresses("ada", 4, net="192.0.2")
    assert attempt("198.51.100.31", "ada", RIGHT).status_code == 429


def test_the_wide_locks_end_after_the_cool_off(user) -> None:
    spread_over_addresses("ada", 20)
    for n in range(20):
        attempt("203.0.113.88", f"someone{n}", "Summer2026!")
    assert attempt("198.51.100.40", "ada", RIGHT).status_code == 429
    assert attempt("203.0.113.88", "ada", RIGHT).status_code == 429
    AccessAttempt.objects.update(attempt_time=datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC))
    assert attempt("198.51.100.40", "ada", RIGHT).status_code == 302
    assert attempt("203.0.113.88", "ada", RIGHT).status_code == 302


def test_spraying_from_fresh_addresses_of_one_ipv6_network_is_one_address(user) -> None:
    # An IPv6 host takes any address of its /64 at will, and writes each in several ways.
    spellings = ("2001:db8:5:7::{n:x}", "2001:0db8:0005:0007:0000:0000:0000:{n:04x}")
    for n in range(1, 21):
        attempt(spellings[n % 2].format(n=n * 257), f"someone{n}", "Summer2026!")
    locked = attempt("2001:db8:5:7:abcd::1", "grace", "Summer2026!")
    assert locked.status_code == 429
    assert "from your address" in locked.content.decode()
    assert attempt("2001:db8:5:8::1", "grace", "wrong").status_code == 200  # another /64
