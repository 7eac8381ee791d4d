"""What happens between the address check and the connection, and around it.

The system resolver is replaced (`socket.getaddrinfo`), so names answer what a hostile DNS
server would, and a loopback server records whether anything reached it.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

import jazzmine.net as net
from jazzmine.net import (
    OutboundPolicy,
    OutboundURLRefused,
    outbound_async_client,
    outbound_client,
    refusal_in,
    url_check,
)
from tests.llm.listener import Listener

PUBLIC = "93.184.216.34"
OK = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"


@pytest.fixture
def server() -> Iterator[Listener]:
    running = Listener(answer=OK)
    yield running
    running.close()


def fake_dns(
    monkeypatch: pytest.MonkeyPatch, answer: Callable[[str], list[str] | None]
) -> list[str]:
    """Answer every lookup with `answer(host)` (None: the real resolver); return what was asked."""
    asked: list[str] = []
    real = socket.getaddrinfo

    def getaddrinfo(
        host: str | bytes | None, port: object, family: int = 0, type: int = 0, *rest: object
    ) -> list[tuple]:
        name = host.decode() if isinstance(host, bytes) else str(host)
        asked.append(name)
        addresses = answer(name)
        if addresses is None:
            return real(host, port, family, type, *rest)  # type: ignore[arg-type]
        if not addresses:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        number = int(port) if port is not None else 0  # type: ignore[call-overload]
        return [
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (a, number, 0, 0))
            if ":" in a
            else (socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, number))
            for a in addresses
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


def fetch(url: str, policy: OutboundPolicy = net.STRICT, **options: object) -> httpx.Response:
    with outbound_client(policy, timeout=3) as client:
        return client.get(url, **options)  # type: ignore[arg-type]


async def afetch(url: str, policy: OutboundPolicy = net.STRICT) -> httpx.Response:
    async with outbound_async_client(policy, timeout=3) as client:
        return await client.get(url)


def either(use_async: bool, url: str, policy: OutboundPolicy = net.STRICT) -> httpx.Response:
    return asyncio.run(afetch(url, policy)) if use_async else fetch(url, policy)


# --- DNS rebinding ---------------------------------------------------------------------------


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_name_public_when_checked_and_loopback_when_used_never_reaches_loopback(
    monkeypatch: pytest.MonkeyPatch, server: Listener, use_async: bool
) -> None:
    answers = iter([[PUBLIC]])
    fake_dns(
        monkeypatch, lambda host: next(answers, ["127.0.0.1"]) if host == "rebind.test" else None
    )
    url = f"http://rebind.test:{server.port}/"
    url_check(url, policy=net.STRICT)  # saved: public
    with pytest.raises(httpx.ConnectError) as caught:
        either(use_async, url)
    assert refusal_in(caught.value) is not None
    assert "loopback" in str(refusal_in(caught.value))
    assert server.accepted == 0


def test_the_name_is_resolved_once_and_the_vetted_address_is_what_is_connected_to(
    monkeypatch: pytest.MonkeyPatch, server: Listener
) -> None:
    """Public on the first lookup, loopback on any later one: only one lookup may happen."""
    answers = iter([[PUBLIC]])

    def answer(host: str) -> list[str] | None:
        if host == "rebind.test":
            return next(answers, ["127.0.0.1"])
        if host == PUBLIC:
            return []  # the test reaches no public address: connecting to it fails here
        return None

    asked = fake_dns(monkeypatch, answer)
    with pytest.raises(httpx.ConnectError):
        fetch(f"http://rebind.test:{server.port}/")
    assert asked == ["rebind.test", PUBLIC]
    assert server.accepted == 0


def test_the_socket_peer_is_checked_before_a_byte_is_sent(
    monkeypatch: pytest.MonkeyPatch, server: Listener
) -> None:
    """Should the vetted address itself lead elsewhere (here a resolver lying even about it)."""
    fake_dns(
        monkeypatch,
        lambda host: {"rebind.test": [PUBLIC], PUBLIC: ["127.0.0.1"]}.get(host),
    )
    with pytest.raises(httpx.ConnectError) as caught:
        fetch(f"http://rebind.test:{server.port}/")
    assert "connected to a loopback address" in str(refusal_in(caught.value))
    server.close()
    assert server.received == b""


# --- what a name resolves to -----------------------------------------------------------------

RESOLVED = {
    "v4-mapped loopback": ["::ffff:127.0.0.1"],
    "unspecified v4": ["0.0.0.0"],
    "unspecified v6": ["::"],
    "link-local v6": ["fe80::1"],
    "unique local v6": ["fc00::1"],
    "carrier-grade NAT": ["100.64.0.1"],
    "NAT64 of a private v4": ["64:ff9b::a00:1"],
    "NAT64 of loopback": ["64:ff9b::7f00:1"],
    "local NAT64": ["64:ff9b:1::a00:1"],
    "6to4 of loopback": ["2002:7f00:1::1"],
    "benchmarking": ["198.18.0.1"],
    "multicast v4": ["224.0.0.1"],
    "multicast v6": ["ff02::1"],
    "cloud metadata": ["169.254.169.254"],
    "v4-mapped metadata": ["::ffff:169.254.169.254"],
    "public then private": [PUBLIC, "10.0.0.7"],
    "public then loopback v6": ["2606:4700::1111", "::1"],
}


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("name", sorted(RESOLVED))
def test_a_name_resolving_to_an_internal_address_is_never_connected_to(
    monkeypatch: pytest.MonkeyPatch, name: str, use_async: bool
) -> None:
    asked = fake_dns(monkeypatch, lambda host: RESOLVED[name] if host == "odd.test" else None)
    with pytest.raises(OutboundURLRefused):
        url_check("http://odd.test/", policy=net.STRICT)
    with pytest.raises(httpx.ConnectError) as caught:
        either(use_async, "http://odd.test/")
    assert refusal_in(caught.value) is not None
    # Refused at the lookup: no address of the answer was even looked up to connect to.
    assert set(asked) == {"odd.test"}


# --- redirects -------------------------------------------------------------------------------


def test_a_redirect_to_loopback_is_not_followed_and_each_hop_is_vetted_if_asked(
    server: Listener,
) -> None:
    redirect = Listener(
        answer=(
            f"HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:{server.port}/\r\n"
            "content-length: 0\r\nconnection: close\r\n\r\n"
        ).encode()
    )
    policy = OutboundPolicy.from_entries([f"127.0.0.1:{redirect.port}"])
    try:
        assert fetch(f"http://127.0.0.1:{redirect.port}/", policy).status_code == 302
        # A caller asking for redirects gets each hop through the same check.
        with pytest.raises(httpx.ConnectError) as caught:
            fetch(f"http://127.0.0.1:{redirect.port}/", policy, follow_redirects=True)
    finally:
        redirect.close()
    assert refusal_in(caught.value) is not None
    assert redirect.accepted == 2
    assert server.accepted == 0


# --- proxies ---------------------------------------------------------------------------------


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_proxy_from_the_environment_is_never_used(
    monkeypatch: pytest.MonkeyPatch, server: Listener, use_async: bool
) -> None:
    proxy = Listener(answer=OK)
    try:
        for variable in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
            monkeypatch.setenv(variable, f"http://127.0.0.1:{proxy.port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        policy = OutboundPolicy.from_entries([f"127.0.0.1:{server.port}"])
        assert either(use_async, f"http://127.0.0.1:{server.port}/", policy).text == "ok"
    finally:
        proxy.close()
    assert proxy.accepted == 0
    assert server.accepted == 1


@pytest.mark.parametrize("make", [outbound_client, outbound_async_client])
@pytest.mark.parametrize(
    "option",
    [{"proxy": "http://127.0.0.1:3128"}, {"mounts": {"all://": httpx.HTTPTransport()}}],
    ids=["proxy", "mounts"],
)
def test_a_proxy_or_mount_passed_in_is_refused(make: Callable, option: dict) -> None:
    """Either would carry requests past the guarded transport; a deployment cannot slip one in."""
    with pytest.raises(TypeError, match="skip the checks"):
        make(net.STRICT, **option)


# --- the time an exchange may take -----------------------------------------------------------


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_receiver_sending_a_byte_at_a_time_is_cut_off_at_the_total_timeout(
    use_async: bool,
) -> None:
    """Each byte comes well within the read timeout; the whole answer would take 10 s."""
    slow = Listener(
        answer=OK.replace(b"\r\n\r\n", b"\r\nx-pad: " + b"a" * 40 + b"\r\n\r\n"), drip=0.15
    )
    policy = OutboundPolicy.from_entries([f"127.0.0.1:{slow.port}"])
    url = f"http://127.0.0.1:{slow.port}/"

    async def afetch_bounded() -> None:
        async with outbound_async_client(policy, timeout=1, total_timeout=1) as client:
            await client.get(url)

    def fetch_bounded() -> None:
        with outbound_client(policy, timeout=1, total_timeout=1) as client:
            client.get(url)

    started = time.monotonic()
    try:
        with pytest.raises(httpx.TimeoutException):
            asyncio.run(afetch_bounded()) if use_async else fetch_bounded()
    finally:
        took = time.monotonic() - started
        slow.close()
    assert slow.accepted == 1
    assert took < 2.5


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_name_server_answering_slowly_is_cut_off_at_the_total_timeout(
    monkeypatch: pytest.MonkeyPatch, use_async: bool
) -> None:
    """The lookup is part of the exchange: a name server that takes 4 s (or never answers)
    must not hold a webhook attempt past its total timeout of 0.5 s."""

    def slow_public(host: str) -> list[str] | None:
        if host != "slow-dns.test":
            return None
        time.sleep(4)
        return [PUBLIC]

    asked = fake_dns(monkeypatch, slow_public)

    async def afetch_bounded() -> None:
        async with outbound_async_client(net.STRICT, timeout=5, total_timeout=0.5) as client:
            await client.get("http://slow-dns.test/")

    def fetch_bounded() -> None:
        with outbound_client(net.STRICT, timeout=5, total_timeout=0.5) as client:
            client.get("http://slow-dns.test/")

    started = time.monotonic()
    with pytest.raises(httpx.ConnectTimeout, match=r"looking up slow-dns\.test took longer"):
        asyncio.run(afetch_bounded()) if use_async else fetch_bounded()
    assert time.monotonic() - started < 1.5
    assert asked.count("slow-dns.test") == 1


def test_a_client_loads_no_certificate_bundle_of_its_own(monkeypatch) -> None:
    # Each client loaded the whole CA bundle twice (~40 ms of CPU), on the web process's event
    # loop for every LLM call: one verifying context serves them all.
    policy = net.OutboundPolicy()
    net.outbound_client(policy)  # the first may make the shared context
    loads = []
    real = ssl.SSLContext.load_verify_locations

    def counted(self, *args, **kwargs):
        loads.append(args or kwargs)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    for _ in range(3):
        net.outbound_client(policy)
        net.outbound_async_client(policy)
    assert loads == []
