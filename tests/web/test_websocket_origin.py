"""Websocket handshakes are accepted only from this server's own origin: scheme, host and port.

Policy for a handshake without Origin: refused (every browser sends one, so only a non-browser
client can omit it, and it must send a matching one too).
"""

from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator
from django.test import Client

from jazzmine_web.asgi import application
from jazzmine_web.origins import origin_allowed

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def cookie(user) -> tuple[bytes, bytes]:
    client = Client()
    client.force_login(user)
    return (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())


async def handshake(headers: list[tuple[bytes, bytes]]) -> bool:
    communicator = WebsocketCommunicator(application, "/ws/reviews/queue/", headers=headers)
    connected, _ = await communicator.connect(timeout=5)
    await communicator.disconnect()
    return connected


async def test_a_page_on_another_port_of_the_same_host_is_refused(cookie) -> None:
    headers = [cookie, (b"host", b"127.0.0.1:8000"), (b"origin", b"http://127.0.0.1:9999")]
    assert not await handshake(headers)


async def test_the_servers_own_origin_is_accepted(cookie) -> None:
    headers = [cookie, (b"host", b"127.0.0.1:8000"), (b"origin", b"http://127.0.0.1:8000")]
    assert await handshake(headers)


async def test_a_handshake_without_origin_is_refused(cookie) -> None:
    assert not await handshake([cookie, (b"host", b"127.0.0.1:8000")])


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("127.0.0.1:8000", "https://127.0.0.1:8000"),  # another scheme
        ("127.0.0.1:8000", "http://localhost:8000"),  # another host
        ("127.0.0.1:8000", "http://127.0.0.1"),  # default port 80 is another port
        ("127.0.0.1:8000", "null"),
        ("127.0.0.1:8000", "http://127.0.0.1:8000.evil.test"),
        ("127.0.0.1:8000", "http://user@127.0.0.1:8000"),
        ("evil.test:8000", "http://evil.test:8000"),  # a rebound name: not an allowed host
        ("localhost", "http://localhost:80/x"),
    ],
)
def test_an_origin_that_differs_in_scheme_host_or_port_is_refused(host: str, origin: str) -> None:
    assert not origin_allowed(origin=origin, scheme="ws", host=host)


def test_default_ports_are_the_same_origin_written_either_way() -> None:
    assert origin_allowed(origin="http://localhost:80", scheme="ws", host="localhost")
    assert origin_allowed(origin="http://LOCALHOST", scheme="ws", host="localhost:80")
    assert origin_allowed(origin="http://[::1]:8000", scheme="ws", host="[::1]:8000")


def test_a_configured_trusted_origin_is_accepted_exactly(settings) -> None:
    settings.CSRF_TRUSTED_ORIGINS = ["https://studio.example.com"]
    assert origin_allowed(origin="https://studio.example.com", scheme="ws", host="127.0.0.1:8000")
    assert not origin_allowed(
        origin="https://studio.example.com:8443", scheme="ws", host="127.0.0.1:8000"
    )
    assert not origin_allowed(
        origin="http://studio.example.com", scheme="ws", host="127.0.0.1:8000"
    )
