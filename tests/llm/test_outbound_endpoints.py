"""LLM endpoints are outbound URLs: internal addresses are refused, before and at connect time."""

from __future__ import annotations

import httpx
import pytest

import jazzmine.net as net
from jazzmine.llm import LLMConfig, LLMConfigError, stream_chat
from jazzmine.llm.fake.server import DEFAULT_MODEL, FakeLLMServer
from jazzmine.net import OutboundPolicy, OutboundURLRefused, outbound_client, url_check

from .conftest import loopback_config
from .listener import Listener, http_answer

HI = [{"role": "user", "content": "Say hello"}]

ATTACKER_SPELLINGS = [
    "http://127.1/",
    "http://0x7f000001/",
    "http://2130706433/",
    "http://017700000001/",
    "http://0177.0.0.1/",
    "http://127.000.000.001/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[::127.0.0.1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:7f00:1::]/",
    "http://[0:0:0:0:0:0:0:1]/",
    "http://localhost./",
    "http://LOCALHOST/",
    "http://LocalHost:8765/v1",
    "http://anything.localhost/",
    "http://0.0.0.0/",
    "http://0/",
    "http://[::]/",
    "http://169.254.169.254/latest/meta-data",
    "http://[fd00:ec2::254]/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://METADATA.GOOGLE.INTERNAL./",
    "http://100.100.100.200/",
    "http://10.0.0.1/",
    "http://172.16.5.4/",
    "http://192.168.0.1/",
    "http://100.64.0.1/",
    "http://[fc00::1]/",
    "http://[fe80::1]/",
    "http://224.0.0.1/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    "http://user@127.0.0.1/",
    "http://example.com@127.0.0.1/",
    "http://user:pass@example.com/",
    "http://127.0.0.1\\@example.com/",
    "file:///etc/passwd",
    "gopher://127.0.0.1:6379/_INFO",
    "ftp://example.com/",
    "dict://127.0.0.1:11211/",
    "http://exa mple.com/",
    "http://example.com/\n",
    "http://127.0.0.1\r\n.example.com/",
    "http://example.com/\t",
    " http://127.0.0.1/",
    "http:/127.0.0.1/",
    "http:127.0.0.1",
    "",
]


@pytest.mark.parametrize("url", ATTACKER_SPELLINGS)
def test_an_attacker_spelling_of_an_internal_endpoint_is_refused(url: str) -> None:
    with pytest.raises(OutboundURLRefused):
        url_check(url, policy=net.STRICT)


@pytest.mark.parametrize("url", ["http://example.com/v1", "https://93.184.216.34/v1"])
def test_a_public_endpoint_passes(url: str, monkeypatch) -> None:
    monkeypatch.setattr(net, "resolve", lambda host, port: ["93.184.216.34"])
    assert url_check(url, policy=net.STRICT).host


def test_a_name_that_resolves_to_loopback_is_refused(monkeypatch) -> None:
    monkeypatch.setattr(net, "resolve", lambda host, port: ["127.0.0.1"])
    with pytest.raises(OutboundURLRefused, match="resolves to a loopback"):
        url_check("http://localtest.me/", policy=net.STRICT)


def test_a_name_with_one_internal_address_among_public_ones_is_refused(monkeypatch) -> None:
    monkeypatch.setattr(net, "resolve", lambda host, port: ["93.184.216.34", "10.0.0.7"])
    with pytest.raises(OutboundURLRefused, match="private"):
        url_check("http://mixed.test/", policy=net.STRICT)


def test_an_allowed_host_and_port_passes_but_another_port_does_not() -> None:
    policy = OutboundPolicy.from_entries(["127.0.0.1:8765"])
    assert url_check("http://127.0.0.1:8765/v1", policy=policy)
    with pytest.raises(OutboundURLRefused):
        url_check("http://127.0.0.1:8766/v1", policy=policy)
    with pytest.raises(OutboundURLRefused):
        url_check("http://[::1]:8765/v1", policy=policy)


def test_a_malformed_allow_list_entry_is_an_error() -> None:
    with pytest.raises(ValueError):
        OutboundPolicy.from_entries(["http://127.0.0.1:8765/v1"])


def test_dns_rebinding_is_caught_at_connect_time_and_the_server_is_never_reached(
    monkeypatch,
) -> None:
    """The name is public when saved and loopback when used: the real server must see nothing."""
    listener = Listener()
    try:
        answers = iter([["93.184.216.34"], ["127.0.0.1"], ["127.0.0.1"]])
        monkeypatch.setattr(net, "resolve", lambda host, port: next(answers))
        url = f"http://rebind.test:{listener.port}/hook"
        url_check(url, policy=net.STRICT)  # save time: public
        with outbound_client(net.STRICT, timeout=3) as client, pytest.raises(httpx.ConnectError):
            client.post(url, content=b"{}")
    finally:
        listener.close()
    assert listener.accepted == 0


async def test_the_llm_client_refuses_a_rebound_name_without_reaching_the_server(
    monkeypatch,
) -> None:
    listener = Listener()
    try:
        monkeypatch.setattr(net, "resolve", lambda host, port: ["127.0.0.1"])
        config = LLMConfig(f"http://rebind.test:{listener.port}/v1", model="m", timeout=3)
        with pytest.raises(LLMConfigError, match=r"not contacted.*loopback"):
            [c async for c in stream_chat(config, HI)]
    finally:
        listener.close()
    assert listener.accepted == 0


@pytest.mark.parametrize(
    "template",
    ["http://127.0.0.1:{port}/v1", "http://127.1:{port}/v1", "http://[::ffff:127.0.0.1]:{port}/v1"],
)
async def test_the_llm_client_never_connects_to_loopback_unless_allowed(template: str) -> None:
    listener = Listener()
    try:
        config = LLMConfig(template.format(port=listener.port), model="m", timeout=3)
        with pytest.raises(LLMConfigError, match="JAZZMINE_OUTBOUND_ALLOWED_HOSTS"):
            [c async for c in stream_chat(config, HI)]
    finally:
        listener.close()
    assert listener.accepted == 0


async def test_a_local_model_server_works_once_its_host_and_port_are_allowed() -> None:
    async with FakeLLMServer(token_delay=0.0) as server:
        config = loopback_config(server.base_url, model=DEFAULT_MODEL)
        chunks = [c async for c in stream_chat(config, HI)]
    assert chunks[-1].text


async def test_a_redirect_is_not_followed() -> None:
    target = Listener()
    redirect = Listener(
        answer=http_answer(
            "302 Found", location=f"http://127.0.0.1:{target.port}/v1/chat/completions"
        )
    )
    try:
        config = loopback_config(f"http://127.0.0.1:{redirect.port}/v1", model="m", timeout=3)
        with pytest.raises(Exception, match="302"):
            [c async for c in stream_chat(config, HI)]
    finally:
        redirect.close()
        target.close()
    assert target.accepted == 0


async def test_a_failed_answer_body_is_never_part_of_the_error() -> None:
    body = b'{"error": {"message": "root:x:0:0:root:/root:/bin/bash"}}'
    leaky = Listener(answer=http_answer("500 Oops", body, content_type="application/json"))
    try:
        config = loopback_config(f"http://127.0.0.1:{leaky.port}/v1", model="m", timeout=3)
        with pytest.raises(Exception) as caught:
            [c async for c in stream_chat(config, HI)]
    finally:
        leaky.close()
    assert "500" in str(caught.value)
    assert "root:" not in str(caught.value)
