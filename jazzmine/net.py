"""Outbound URL safety: webhooks and LLM endpoints never reach internal addresses.

A URL chosen by a user makes this server send requests, so by default it may only lead to a
public address. The check runs twice: when the URL is saved (a clear error for the user) and
again when a connection opens, on the very address connected to, so a name that resolves to a
public address at save time and to 127.0.0.1 later (DNS rebinding) is still refused: the name is
resolved once, every answer vetted, a vetted address connected to, and the socket's peer address
vetted once more before anything is sent. Clients made here never follow redirects and never use
a proxy, from the environment or passed in (through a proxy the address check would judge the
proxy, not the target). `total_timeout` bounds a whole exchange, not each read: a receiver that
sends one byte at a time must not hold a worker for hours.

A deployment lists exceptions with `OutboundPolicy.from_entries(["127.0.0.1:8765", "llm.lan"])`:
`host:port` allows one port, a bare host every port; a local model server is the usual case.
"""

from __future__ import annotations

import concurrent.futures
import functools
import ipaddress
import re
import socket
import ssl
import time
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
import httpcore
import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

SCHEMES = ("http", "https")
MAX_URL_CHARS = 2048

# Names that mean "this machine" or a cloud's metadata service, whatever DNS says about them.
BLOCKED_NAMES = frozenset(
    {
        "localhost",
        "localhost.localdomain",
        "ip6-localhost",
        "ip6-loopback",
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
BLOCKED_SUFFIXES = (".localhost", ".internal", ".local")

# Cloud metadata services: AWS/GCP/Azure/Oracle, AWS ECS, AWS over IPv6, Alibaba.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200", "192.0.0.192")
)

# Ranges that `ipaddress` (Python 3.11) calls global but no public endpoint lives in.
EXTRA_BLOCKED = (
    (ipaddress.ip_network("100.64.0.0/10"), "private (carrier-grade NAT)"),
    (ipaddress.ip_network("192.0.0.0/24"), "reserved"),
    (ipaddress.ip_network("64:ff9b:1::/48"), "private (local NAT64)"),
)

# IPv6 forms that carry an IPv4 address a gateway may deliver to: NAT64 and IPv4-compatible.
EMBEDDING_V4 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("::/96"))

_V4_PART = re.compile(r"^(0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*)$")


class OutboundURLRefused(ValueError):
    """The URL may not be used as an outbound endpoint; the message says why."""


class OutboundHostNotPublic(OutboundURLRefused):
    """The URL is sound but leads to a host that is not public: one an operator may allow.

    Kept apart from the other refusals so that only this one points at the deployment's list
    of allowed hosts: a host name that does not resolve, say, is not fixed by allowing it.
    """


class OutboundAddressRefused(httpcore.ConnectError):
    """A connection was about to open to a refused address (httpx reports it as ConnectError)."""


@dataclass(frozen=True)
class OutboundPolicy:
    """Which hosts may be reached although they are not public: `(host, port or None)` pairs."""

    allowed: frozenset[tuple[str, int | None]] = field(default_factory=frozenset)

    @classmethod
    def from_entries(cls, entries: Iterable[str]) -> OutboundPolicy:
        """Parse `host`, `host:port`, `[v6]` and `[v6]:port` entries; raise ValueError on junk."""
        allowed: set[tuple[str, int | None]] = set()
        for raw in entries:
            entry = raw.strip()
            if not entry:
                continue
            try:
                parsed = urlsplit(f"//{entry}")
                host, port = parsed.hostname, parsed.port
            except ValueError:
                host = port = None
            if not host or parsed.path or parsed.username is not None or parsed.query:
                raise ValueError(f"{raw!r} is not a host or host:port")
            allowed.add((canonical_host(host), port))
        return cls(frozenset(allowed))

    def allows(self, host: str, port: int) -> bool:
        """Tell whether a deployment allowed this host on this port."""
        name = canonical_host(host)
        return (name, port) in self.allowed or (name, None) in self.allowed


STRICT = OutboundPolicy()


def canonical_host(host: str) -> str:
    """Return a host as compared: lower case, no brackets or final dot, IP literals normalised."""
    name = host.strip().lower().removeprefix("[").removesuffix("]").removesuffix(".")
    address = ip_literal(name)
    return str(address) if address is not None else name


def ip_literal(host: str) -> IPAddress | None:
    """Return the address a host spells, in any form a C resolver accepts (`127.1`, `0x7f000001`)."""
    name = host.lower().removeprefix("[").removesuffix("]")
    try:
        return ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        pass
    parts = name.split(".")
    if not 1 <= len(parts) <= 4 or not all(_V4_PART.match(p) for p in parts):
        return None
    numbers = []
    for part in parts:
        if part.startswith("0x"):
            numbers.append(int(part[2:] or "0", 16))
        elif part.startswith("0") and len(part) > 1:
            numbers.append(int(part, 8))
        else:
            numbers.append(int(part))
    # inet_aton: the last part fills all the bytes the earlier parts left.
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (4 - len(head)):
        return None
    value = 0
    for n in head:
        value = value * 256 + n
    value = value * 256 ** (4 - len(head)) + last
    return ipaddress.IPv4Address(value)


def address_refusal(address: IPAddress) -> str | None:
    """Return why an address may not be reached ("loopback", ...), or None for a public one."""
    if address in METADATA_ADDRESSES:
        return "cloud metadata"
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if (
            embedded is None
            and any(address in net for net in EMBEDDING_V4)
            and not (address.is_unspecified or address.is_loopback)
        ):
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            reason = address_refusal(embedded)
            if reason is not None:
                return reason
    if address.is_unspecified:
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    for network, reason in EXTRA_BLOCKED:
        if address.version == network.version and address in network:
            return reason
    if address.is_private or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local):
        return "private"
    if address.is_reserved or not address.is_global:
        return "reserved"
    return None


def resolve(host: str, port: int) -> list[str]:
    """Return every address a name resolves to (the one place DNS is asked; tests replace it)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]).split("%", 1)[0] for info in infos))


def connect_addresses(host: str, port: int, *, policy: OutboundPolicy) -> list[str]:
    """Return the vetted addresses to connect to for host:port; raise OutboundURLRefused."""
    name = canonical_host(host)
    if policy.allows(name, port):
        return [host.removeprefix("[").removesuffix("]")]
    if name in BLOCKED_NAMES or name.endswith(BLOCKED_SUFFIXES):
        raise OutboundHostNotPublic(f"{name} is a local or metadata host name")
    literal = ip_literal(name)
    if literal is not None:
        reason = address_refusal(literal)
        if reason is not None:
            raise OutboundHostNotPublic(f"{name} is {_article(reason)} address")
        return [str(literal)]
    try:
        addresses = resolve(name, port)
    except (OSError, UnicodeError) as exc:
        raise OutboundURLRefused(f"{name} does not resolve") from exc
    if not addresses:
        raise OutboundURLRefused(f"{name} does not resolve")
    for text in addresses:
        try:
            reason = address_refusal(ipaddress.ip_address(text))
        except ValueError:
            reason = "unreadable"
        # One bad address refuses the name: a mix of public and internal is a rebinding trick.
        if reason is not None:
            raise OutboundHostNotPublic(f"{name} resolves to {_article(reason)} address")
    return addresses


def url_check(url: object, *, policy: OutboundPolicy, resolve_names: bool = True) -> httpx.URL:
    """Return the parsed URL if it may be an outbound endpoint; raise OutboundURLRefused."""
    if not isinstance(url, str) or not url:
        raise OutboundURLRefused("The URL is empty.")
    if len(url) > MAX_URL_CHARS:
        raise OutboundURLRefused(f"The URL is longer than {MAX_URL_CHARS} characters.")
    if any(_is_space_or_control(c) for c in url) or "\\" in url:
        raise OutboundURLRefused("The URL contains spaces, control characters or backslashes.")
    scheme = url.partition(":")[0].lower()
    if "://" not in url or scheme not in SCHEMES:
        raise OutboundURLRefused("The URL must start with http:// or https://.")
    try:
        parsed = httpx.URL(url)
        split = urlsplit(url)
        split_host = split.hostname
        # httpx decodes punycode lazily, here: an A-label IDNA refuses (`xn--localhost`) raises
        # idna.IDNAError, a UnicodeError (itself a ValueError, listed to say why it is caught).
        host = parsed.host
    except (httpx.InvalidURL, UnicodeError, ValueError) as exc:
        raise OutboundURLRefused("The URL cannot be parsed.") from exc
    if parsed.userinfo or "@" in split.netloc:
        raise OutboundURLRefused("The URL must not carry a user name or password.")
    if not host:
        raise OutboundURLRefused("The URL has no host.")
    # Two parsers must agree on the host, or an attacker picks the one that reads it their way.
    if split_host is None or canonical_host(split_host) != canonical_host(host):
        raise OutboundURLRefused("The URL's host is ambiguous.")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    name = canonical_host(host)
    if policy.allows(name, port):
        return parsed
    if not resolve_names and ip_literal(name) is None:
        if name in BLOCKED_NAMES or name.endswith(BLOCKED_SUFFIXES):
            raise OutboundHostNotPublic(f"The URL leads to {name}, a local or metadata host name.")
        return parsed
    try:
        connect_addresses(host, port, policy=policy)
    except OutboundURLRefused as exc:
        raise type(exc)(f"The URL is refused: {exc}.") from None
    return parsed


# What `outbound_client` fixes itself: each would route requests around its transport (a proxy
# connects to the proxy, a mount uses another transport) or undo what it promises. `transport`,
# `trust_env` and `follow_redirects` already clash with its own arguments.
_FIXED_OPTIONS = frozenset({"proxy", "mounts"})


def outbound_client(
    policy: OutboundPolicy, *, total_timeout: float | None = None, **kwargs: object
) -> httpx.Client:
    """Return a client that connects only to vetted addresses, without redirects or proxies.

    `total_timeout` (seconds) ends each connection that long after it began to connect, however
    the time was spent; httpx's own timeouts bound each step (one read) only.
    """
    _refuse_fixed_options(kwargs)
    return httpx.Client(
        transport=_GuardedTransport(policy, total_timeout),
        trust_env=False,
        follow_redirects=False,
        **kwargs,  # type: ignore[arg-type]
    )


def outbound_async_client(
    policy: OutboundPolicy, *, total_timeout: float | None = None, **kwargs: object
) -> httpx.AsyncClient:
    """Return the async form of `outbound_client`."""
    _refuse_fixed_options(kwargs)
    return httpx.AsyncClient(
        transport=_GuardedAsyncTransport(policy, total_timeout),
        trust_env=False,
        follow_redirects=False,
        **kwargs,  # type: ignore[arg-type]
    )


def _refuse_fixed_options(kwargs: dict[str, object]) -> None:
    fixed = sorted(_FIXED_OPTIONS & kwargs.keys())
    if fixed:
        raise TypeError(f"outbound clients take no {', '.join(fixed)}: they would skip the checks")


def refusal_in(exc: BaseException) -> OutboundAddressRefused | None:
    """Return the connect-time refusal behind an httpx error, if that is what it was."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OutboundAddressRefused):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


# --- connect-time check ----------------------------------------------------------------------


class _GuardedBackend(httpcore.NetworkBackend):
    """Resolve once, vet every address, connect to a vetted one; TLS still names the host."""

    def __init__(self, policy: OutboundPolicy, total_timeout: float | None) -> None:
        self._policy = policy
        self._total_timeout = total_timeout
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        deadline = _deadline(self._total_timeout)
        addresses = _vetted_by(deadline, host, port, self._policy)
        error: httpcore.ConnectError | None = None
        for address in addresses:
            try:
                stream = self._inner.connect_tcp(
                    address,
                    port,
                    _within(timeout, deadline, httpcore.ConnectTimeout),
                    local_address,
                    socket_options,
                )
            except httpcore.ConnectError as exc:
                error = exc
                continue
            refusal = _peer_refusal(stream, host, port, self._policy)
            if refusal is not None:
                stream.close()
                raise OutboundAddressRefused(refusal)
            return stream if deadline is None else _DeadlineStream(stream, deadline)
        assert error is not None
        raise error

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        raise OutboundAddressRefused("Unix sockets are not outbound endpoints")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _GuardedAsyncBackend(httpcore.AsyncNetworkBackend):
    """The async form of `_GuardedBackend` (resolution runs in a worker thread)."""

    def __init__(self, policy: OutboundPolicy, total_timeout: float | None) -> None:
        self._policy = policy
        self._total_timeout = total_timeout
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        deadline = _deadline(self._total_timeout)
        lookup = functools.partial(_vetted, host, port, self._policy)
        if deadline is None:
            addresses = await anyio.to_thread.run_sync(lookup)
        else:
            # As in `_vetted_by`: the exchange ends at its deadline, the lookup's thread later.
            left = _within(None, deadline, httpcore.ConnectTimeout)
            with anyio.move_on_after(left) as scope:
                addresses = await anyio.to_thread.run_sync(lookup, abandon_on_cancel=True)
            if scope.cancelled_caught:
                raise httpcore.ConnectTimeout(_LOOKUP_TOO_SLOW.format(host=host))
        error: httpcore.ConnectError | None = None
        for address in addresses:
            try:
                stream = await self._inner.connect_tcp(
                    address,
                    port,
                    _within(timeout, deadline, httpcore.ConnectTimeout),
                    local_address,
                    socket_options,
                )
            except httpcore.ConnectError as exc:
                error = exc
                continue
            refusal = _peer_refusal(stream, host, port, self._policy)
            if refusal is not None:
                await stream.aclose()
                raise OutboundAddressRefused(refusal)
            return stream if deadline is None else _AsyncDeadlineStream(stream, deadline)
        assert error is not None
        raise error

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise OutboundAddressRefused("Unix sockets are not outbound endpoints")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every step (TLS, each read and write) ends by one deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: float) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _within(timeout, self._deadline, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _within(timeout, self._deadline, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        limit = _within(timeout, self._deadline, httpcore.ConnectTimeout)
        return _DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, limit), self._deadline
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _AsyncDeadlineStream(httpcore.AsyncNetworkStream):
    """The async form of `_DeadlineStream`."""

    def __init__(self, inner: httpcore.AsyncNetworkStream, deadline: float) -> None:
        self._inner = inner
        self._deadline = deadline

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        limit = _within(timeout, self._deadline, httpcore.ReadTimeout)
        return await self._inner.read(max_bytes, limit)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, _within(timeout, self._deadline, httpcore.WriteTimeout))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        limit = _within(timeout, self._deadline, httpcore.ConnectTimeout)
        return _AsyncDeadlineStream(
            await self._inner.start_tls(ssl_context, server_hostname, limit), self._deadline
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """Return the one TLS context of every outbound client (verifying, as httpx's default).

    Made per client, it loaded the whole CA bundle twice a client: ~40 ms of CPU, on the web
    process's event loop for each LLM call. A context is made to be shared between
    connections and threads; nothing here changes it after it is made.
    """
    return httpx.create_ssl_context(trust_env=False)


class _GuardedTransport(httpx.HTTPTransport):
    """httpx's own transport over a pool that connects through `_GuardedBackend`."""

    def __init__(self, policy: OutboundPolicy, total_timeout: float | None = None) -> None:
        super().__init__(verify=_tls_context(), trust_env=False)
        # httpx takes no network backend, so its pool is replaced by one built the same way.
        self._pool = httpcore.ConnectionPool(
            ssl_context=_tls_context(),
            max_connections=httpx.Limits().max_connections,
            network_backend=_GuardedBackend(policy, total_timeout),
        )


class _GuardedAsyncTransport(httpx.AsyncHTTPTransport):
    """The async form of `_GuardedTransport`."""

    def __init__(self, policy: OutboundPolicy, total_timeout: float | None = None) -> None:
        super().__init__(verify=_tls_context(), trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(  # type: ignore[assignment]
            ssl_context=_tls_context(),
            max_connections=httpx.Limits().max_connections,
            network_backend=_GuardedAsyncBackend(policy, total_timeout),
        )


# Lookups whose exchange gave up on them finish here, unwaited for: the system resolver's own
# timeout (seconds) ends each. Four at once at most; one that waits for a free thread past its
# deadline fails the same way.
_LOOKUPS = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="outbound-dns")
_LOOKUP_TOO_SLOW = "looking up {host} took longer than the exchange's total timeout"


def _vetted_by(deadline: float | None, host: str, port: int, policy: OutboundPolicy) -> list[str]:
    """Return the vetted addresses of host:port, looked up before the deadline if there is one.

    DNS is part of the exchange: a name server that answers slowly (or never) must not hold a
    webhook attempt past its total timeout any more than a receiver that answers slowly.
    """
    if deadline is None:
        return _vetted(host, port, policy)
    lookup = _LOOKUPS.submit(_vetted, host, port, policy)
    try:
        return lookup.result(timeout=_within(None, deadline, httpcore.ConnectTimeout))
    except concurrent.futures.TimeoutError:
        lookup.cancel()  # not started yet: it never will be
        raise httpcore.ConnectTimeout(_LOOKUP_TOO_SLOW.format(host=host)) from None


def _vetted(host: str, port: int, policy: OutboundPolicy) -> list[str]:
    try:
        return connect_addresses(host, port, policy=policy)
    except OutboundURLRefused as exc:
        raise OutboundAddressRefused(f"refused to connect: {exc}") from None


def _peer_refusal(
    stream: httpcore.NetworkStream | httpcore.AsyncNetworkStream,
    host: str,
    port: int,
    policy: OutboundPolicy,
) -> str | None:
    """Return why the socket's actual peer may not be talked to, or None.

    Only vetted addresses are connected to, so this refuses nothing today: it is the check on
    the socket itself, should anything between the vetting and the connection ever resolve
    or route differently.
    """
    if policy.allows(host, port):
        return None
    peer = stream.get_extra_info("server_addr")
    try:
        address = ipaddress.ip_address(str(peer[0]).split("%", 1)[0])
    except (TypeError, IndexError, ValueError):
        return f"refused to talk to {host}: the connection's peer address is unknown"
    reason = address_refusal(address)
    if reason is None:
        return None
    return f"refused to talk to {host}: connected to {_article(reason)} address"


def _deadline(total_timeout: float | None) -> float | None:
    return None if total_timeout is None else time.monotonic() + total_timeout


def _within(
    timeout: float | None, deadline: float | None, kind: type[httpcore.TimeoutException]
) -> float | None:
    """Return the timeout of one step: its own, cut to what is left before the deadline."""
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise kind("the exchange took longer than its total timeout")
    return left if timeout is None else min(timeout, left)


def _is_space_or_control(char: str) -> bool:
    return char.isspace() or unicodedata.category(char)[0] in ("C", "Z")


def _article(reason: str) -> str:
    return ("an " if reason[:1] in "aeiou" else "a ") + reason
