"""A worker's sandbox network allowances are read as it starts; one naming no address stops it.

The keychain's URL and `JAZZMINE_SANDBOX_EGRESS_ALLOW` are the only non-public addresses a
network-enabled sandbox reaches (`jazzmine.sandbox.egress`). A typo there must not leave the
worker running with a tool that can never reach its keychain, nor open anything else.
"""

from __future__ import annotations

from ipaddress import IPv4Address

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from jazzmine.sandbox import egress
from jazzmine_web.workers.services import sandbox_egress_configure


@pytest.fixture(autouse=True)
def nothing_allowed_after():
    yield
    egress.egress_allow(())


@override_settings(
    JAZZMINE_KEYCHAIN_URL="http://127.0.0.1:8000",
    JAZZMINE_SANDBOX_EGRESS_ALLOW=["127.0.0.2:6000"],
)
def test_the_keychain_and_the_listed_pairs_are_allowed_and_nothing_else():
    sandbox_egress_configure()
    assert egress._allowed == (
        egress.Allowed(IPv4Address("127.0.0.1"), 8000),
        egress.Allowed(IPv4Address("127.0.0.2"), 6000),
    )


@override_settings(JAZZMINE_KEYCHAIN_URL="", JAZZMINE_SANDBOX_EGRESS_ALLOW=[])
def test_no_keychain_allows_nothing():
    sandbox_egress_configure()
    assert egress._allowed == ()


@pytest.mark.parametrize(
    "entry", ["no-such-host.invalid:80", "10.0.0.5", "[::1]:80", "redis://", "http://:80"]
)
def test_an_entry_naming_no_ipv4_address_and_port_stops_the_worker(entry):
    with override_settings(JAZZMINE_KEYCHAIN_URL="", JAZZMINE_SANDBOX_EGRESS_ALLOW=[entry]):
        with pytest.raises(ImproperlyConfigured, match="JAZZMINE_SANDBOX_EGRESS_ALLOW"):
            sandbox_egress_configure()
