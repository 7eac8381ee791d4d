"""The login lock counts an IPv6 /64 as one address.

The lock is per username and address. One IPv6 host is handed a whole /64 (2^64 addresses) and
picks a fresh one for each try at no cost, so with addresses counted one by one it guessed a
password without end, five tries a time. A /64 is one network, one site: it is one address
here. IPv4 addresses, and IPv4 written as IPv6 by a dual-stack socket, stay counted one by one.
"""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

RIGHT = "correct horse battery"  # the `user` fixture's password


def attempt(address: str, password: str) -> int:
    client = Client(REMOTE_ADDR=address)
    return client.post("/login/", {"username": "ada", "password": password}).status_code


@pytest.mark.parametrize(
    "addresses",
    [
        [f"2001:db8:5:7::{n:x}" for n in range(1, 6)],
        # The same host, spelled every way an address can be.
        [
            "2001:db8:5:7::1",
            "2001:DB8:5:7:0:0:0:2",
            "2001:0db8:0005:0007:ffff:ffff:ffff:ffff",
            "2001:db8:5:7:a:b:c:d",
            "2001:db8:5:7::1%eth0",
        ],
    ],
)
def test_a_host_changing_its_address_within_its_64_stays_locked(user, addresses) -> None:
    for address in addresses:
        attempt(address, "wrong")
    assert attempt("2001:db8:5:7:1234::99", RIGHT) == 429


def test_another_ipv6_network_is_not_locked(user) -> None:
    for n in range(1, 6):
        attempt(f"2001:db8:5:7::{n:x}", "wrong")
    assert attempt("2001:db8:5:8::1", RIGHT) == 302


def test_ipv4_addresses_are_still_counted_one_by_one(user) -> None:
    for n in range(1, 6):
        attempt("192.0.2.1", "wrong")
    assert attempt("::ffff:192.0.2.1", RIGHT) == 429  # the same address, from a dual-stack socket
    assert attempt("192.0.2.2", RIGHT) == 302
