"""The network of a network-enabled sandbox: the public internet, never this host or a LAN.

A sandbox that may use the network got Docker's default bridge, which reaches everything the
host reaches: the host itself on its bridge and public addresses (a web process listening on
0.0.0.0), the cloud's metadata service at 169.254.169.254, and the private network where a
team's Redis and PostgreSQL live when workers run on several hosts. An approved script that
passes `http://10.0.0.5:6379` to a fetching tool could then write Celery tasks and channel
messages, or read the database. Here such sandboxes get a bridge of their own, with:

- no traffic to the host (the INPUT chain) and none to private, loopback, link-local,
  shared, multicast or reserved IPv4 ranges (the FORWARD chain, through Docker's DOCKER-USER
  hook), except the `host:port` pairs the operator allows (the keychain's address);
- no IPv6 at all (the network is IPv4 only; ip6tables drops the bridge's link-local traffic
  too, and containers get IPv6 turned off);
- no traffic between two sandboxes on it (`enable_icc=false`);
- DNS (port 53) to the resolvers the engine forwards names to, which are on a private
  address more often than not (a cloud's, a LAN's): without it no name resolved at all.

The network and its filter are named after the engine and the allowances both: every
deployment on one engine writes the chains of its own allowances, so one worker starting
never rewrites (widens, or empties) the filter another deployment's sandboxes are behind.

The filter lives in the Docker host's kernel, so it can be set only where the engine runs on
this machine (as root, which starting `dockerd` needs anyway). A worker that cannot set it
starts no network-enabled sandbox (`EgressUnavailable`): fail closed, the run says why.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import docker
import docker.errors

from .engine import ENGINE_ERRORS, EngineUnavailable
from .owner import DEPLOYMENT_LABEL, owner_labels

log = logging.getLogger(__name__)

NETWORK_LABEL = "jazzmine.egress"
# Every IPv4 range that is not the public internet (RFC 6890 and its successors): a sandbox's
# connection to any of them is dropped unless the operator allowed that address and port.
BLOCKED_V4 = (
    "0.0.0.0/8",  # "this network"
    "10.0.0.0/8",  # private
    "100.64.0.0/10",  # carrier-grade NAT (cloud metadata of some providers: 100.100.100.200)
    "127.0.0.0/8",  # loopback (another host's view of it, routed)
    "169.254.0.0/16",  # link-local: the cloud metadata service
    "172.16.0.0/12",  # private: Docker's own bridges among them
    "192.0.0.0/24",  # IETF protocol assignments
    "192.0.2.0/24",  # documentation
    "192.88.99.0/24",  # 6to4 relay anycast (deprecated)
    "192.168.0.0/16",  # private
    "198.18.0.0/15",  # benchmarking
    "198.51.100.0/24",  # documentation
    "203.0.113.0/24",  # documentation
    "224.0.0.0/4",  # multicast
    "240.0.0.0/4",  # reserved, and the broadcast address
)
IPV6_OFF = {"net.ipv6.conf.all.disable_ipv6": "1", "net.ipv6.conf.default.disable_ipv6": "1"}


class EgressUnavailable(EngineUnavailable):
    """A network-enabled sandbox cannot start: its network's filter could not be set."""


@dataclass(frozen=True)
class Allowed:
    """One address and TCP port a sandbox may reach although it is not public."""

    address: ipaddress.IPv4Address
    port: int


def allowed_from(entries: Iterable[str]) -> tuple[Allowed, ...]:
    """Parse `host:port` entries or URLs (`http://172.17.0.1:8000`) into allowed pairs.

    A name is resolved now, to its IPv4 addresses; a name that does not resolve, an entry
    without a port, or an IPv6 address (the network has none) raises ValueError.
    """
    found: list[Allowed] = []
    for raw in entries:
        entry = raw.strip()
        if not entry:
            continue
        parsed = urlsplit(entry if "//" in entry else f"//{entry}")
        try:
            host, port = parsed.hostname, parsed.port
        except ValueError:
            host = port = None
        if port is None and parsed.scheme in ("http", "https"):
            port = 443 if parsed.scheme == "https" else 80
        if not host or port is None:
            raise ValueError(f"{raw!r} is not host:port or an http(s) URL")
        try:
            infos = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)
        except OSError as exc:
            raise ValueError(f"{raw!r}: {host} does not resolve to an IPv4 address") from exc
        for address in sorted({info[4][0] for info in infos}):
            found.append(Allowed(ipaddress.IPv4Address(address), port))
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class EgressNetwork:
    """The engine's network for network-enabled sandboxes, and the names of its filter."""

    name: str
    bridge: str
    chain: str

    @classmethod
    def named(cls, name: str) -> EgressNetwork:
        """Return the network of a name `for_engine` gave, with its bridge and chain."""
        digest = name.removeprefix("jazzmine-egress-")
        return cls(name, f"jzm{digest}", f"JAZZMINE-{digest}")

    @classmethod
    def for_engine(
        cls, engine_id: str, allowed: Sequence[Allowed] = (), deployment: str = ""
    ) -> EgressNetwork:
        """Name the network after the engine, the deployment and the allowances it lets by.

        Two engines on one host never share a bridge, and two deployments on one engine
        never share a filter: each writes its own, whole.
        """
        pairs = sorted(f"{pair.address}:{pair.port}" for pair in set(allowed))
        named = "\n".join([engine_id, deployment, *pairs])
        digest = hashlib.sha256(named.encode()).hexdigest()[:8]
        # A bridge name fits Linux's 15 characters; a chain name fits iptables' 28.
        return cls(f"jazzmine-egress-{digest}", f"jzm{digest}", f"JAZZMINE-{digest}")


_lock = threading.Lock()
_allowed: tuple[Allowed, ...] = ()
_ready: dict[str, EgressNetwork] = {}  # by engine id: networks whose filter this process set


def egress_allow(allowed: Sequence[Allowed]) -> None:
    """Set the pairs every network-enabled sandbox of this process may reach (the worker's)."""
    global _allowed
    with _lock:
        if tuple(allowed) != _allowed:
            _allowed = tuple(allowed)
            _ready.clear()  # the filters are written again with the new allowances


def egress_network(client: docker.DockerClient) -> str:
    """Return the network a network-enabled sandbox joins, made and filtered if need be.

    Blocking (engine calls and iptables): call it off the event loop. The filter's hooks are
    checked on every call (a firewall reload or an engine restart may have dropped them) and
    the whole filter is written again when one is missing.
    """
    try:
        engine_id = str(client.info()["ID"])
    except (*ENGINE_ERRORS, KeyError) as exc:
        raise EgressUnavailable(f"the Docker engine did not say who it is: {exc}") from exc
    deployment = owner_labels().get(DEPLOYMENT_LABEL, "")
    with _lock:
        network = EgressNetwork.for_engine(engine_id, _allowed, deployment)
        if _ready.get(engine_id) == network and _hooked(network):
            return network.name
        _network_ensure(client, network, deployment)
        _filter_write(network, _allowed)
        _ready[engine_id] = network
        _others_remove(client, network, deployment)
    return network.name


def _others_remove(client: docker.DockerClient, kept: EgressNetwork, deployment: str) -> None:
    """Remove this deployment's other sandbox networks that no container is on, and their filter.

    Made for allowances the deployment no longer has (or, unlabelled, by a release that
    named no deployment): left, each held one of the engine's address pools (some thirty),
    and a network-enabled sandbox could not start once all were taken. One a container is on
    stays (the engine refuses); so does another deployment's. A worker whose network went
    finds its filter's hooks gone, and makes both again.
    """
    egress_networks_remove(
        client, lambda owner: owner == deployment, keep=kept.name, unlabelled_as=deployment
    )


def egress_networks_remove(
    client: docker.DockerClient,
    owned: Callable[[str], bool],
    *,
    keep: str = "",
    unlabelled_as: str = "",
) -> int:
    """Remove the sandbox networks of the deployments `owned` says yes to; return how many.

    Only those no container is on (the engine refuses the others), and their filters with
    them. A network with no deployment label is `unlabelled_as`'s. For a deployment that
    ends for good (a test session): its networks would otherwise hold address pools forever.
    """
    try:
        found = client.networks.list(filters={"label": f"{NETWORK_LABEL}=1"})
    except ENGINE_ERRORS:
        return 0
    removed = 0
    for other in found:
        labels = other.attrs.get("Labels") or {}
        if not owned(labels.get(DEPLOYMENT_LABEL, unlabelled_as)):
            continue
        if other.name == keep or not other.name.startswith("jazzmine-egress-"):
            continue
        try:
            other.remove()
        except ENGINE_ERRORS:
            continue  # a container is on it, or it went meanwhile
        _filter_remove(EgressNetwork.named(other.name))
        removed += 1
    return removed


def _filter_remove(network: EgressNetwork) -> None:
    """Unhook a removed network's filter and drop its chains (best effort: it filters nothing)."""
    for family, chain, target in _hooks(network):
        _iptables(family, "-D", chain, "-i", network.bridge, "-j", target)
    for chain in (f"{network.chain}-OUT", f"{network.chain}-IN"):
        _iptables("iptables", "-F", chain)
        _iptables("iptables", "-X", chain)


def _network_ensure(
    client: docker.DockerClient, network: EgressNetwork, deployment: str = ""
) -> None:
    options = {
        "com.docker.network.bridge.name": network.bridge,
        "com.docker.network.bridge.enable_icc": "false",
    }
    try:
        found = client.networks.list(names=[network.name])
        if not found:
            client.networks.create(
                network.name,
                driver="bridge",
                options=options,
                enable_ipv6=False,
                labels={NETWORK_LABEL: "1", DEPLOYMENT_LABEL: deployment},
            )
            found = client.networks.list(names=[network.name])
    except docker.errors.APIError as exc:
        if "already exists" not in str(exc):  # another worker of this engine made it first
            raise EgressUnavailable(f"cannot make the sandboxes' network: {exc}") from exc
        found = client.networks.list(names=[network.name])
    except ENGINE_ERRORS as exc:
        raise EgressUnavailable(f"cannot make the sandboxes' network: {exc}") from exc
    made = [n for n in found if n.name == network.name]
    # A network of that name made by someone else, with another bridge or sandboxes able to
    # reach each other, is not one this filter walls: refuse it rather than use it.
    attrs = made[0].attrs if made else {}
    if not made or any(attrs.get("Options", {}).get(k) != v for k, v in options.items()):
        raise EgressUnavailable(
            f"network {network.name} exists with other options than the sandboxes' own; "
            "remove it (docker network rm) and the worker makes it again"
        )
    if not Path("/sys/class/net", network.bridge).exists():
        raise EgressUnavailable(
            f"the sandboxes' bridge {network.bridge} is not on this machine: the Docker engine "
            "runs elsewhere, and a network-enabled sandbox's filter must be set on its host "
            "(run a worker there)"
        )


def _iptables(family: str, *args: str) -> subprocess.CompletedProcess[str]:
    binary = shutil.which(family)
    if binary is None:
        raise EgressUnavailable(f"{family} is not installed: a network-enabled sandbox needs it")
    # -w: wait for the xtables lock rather than fail beside Docker's own updates.
    return subprocess.run(
        [binary, "-w", "5", *args], capture_output=True, text=True, timeout=30, check=False
    )


def _must(family: str, *args: str) -> None:
    done = _iptables(family, *args)
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip()
        hint = "" if os.geteuid() == 0 else " (the worker is not root)"
        raise EgressUnavailable(
            f"cannot set the sandboxes' filter{hint}: {family} {' '.join(args)}: {why}"
        )


def _restore(rules: str) -> None:
    binary = shutil.which("iptables-restore")
    if binary is None:
        raise EgressUnavailable(
            "iptables-restore is not installed: a network-enabled sandbox needs it"
        )
    done = subprocess.run(
        [binary, "-w", "5", "--noflush"], input=rules, capture_output=True, text=True,
        timeout=30, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        hint = "" if os.geteuid() == 0 else " (the worker is not root)"
        why = (done.stderr or done.stdout).strip()
        raise EgressUnavailable(f"cannot set the sandboxes' filter{hint}: iptables-restore: {why}")


# Where the engine reads the resolvers it forwards a container's names to: the host's own
# file, or systemd-resolved's list of upstream servers when that file names only its stub.
RESOLV_FILES = ("/etc/resolv.conf", "/run/systemd/resolve/resolv.conf")


def resolvers(files: Iterable[str] = RESOLV_FILES) -> list[ipaddress.IPv4Address]:
    """Return the IPv4 resolvers off this host's loopback that sandboxes' names go to.

    A resolver on loopback is asked from the host's own namespace (the engine's DNS does
    so), outside the filter; the others are asked from the sandbox's network, and most are
    on a private address the filter drops.
    """
    found: list[ipaddress.IPv4Address] = []
    for name in files:
        try:
            text = Path(name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            fields = line.split()
            if len(fields) < 2 or fields[0] != "nameserver":
                continue
            try:
                address = ipaddress.ip_address(fields[1])
            except ValueError:
                continue
            if isinstance(address, ipaddress.IPv4Address) and not address.is_loopback:
                found.append(address)
    return list(dict.fromkeys(found))


def _hooks(network: EgressNetwork) -> list[tuple[str, str, str]]:
    # (iptables binary, chain hooked, target): the FORWARD side through Docker's DOCKER-USER,
    # which Docker evaluates before its own rules and never rewrites.
    return [
        ("iptables", "DOCKER-USER", f"{network.chain}-OUT"),
        ("iptables", "INPUT", f"{network.chain}-IN"),
        ("ip6tables", "FORWARD", "DROP"),
        ("ip6tables", "INPUT", "DROP"),
    ]


def _hooked(network: EgressNetwork) -> bool:
    return all(
        _iptables(family, "-C", chain, "-i", network.bridge, "-j", target).returncode == 0
        for family, chain, target in _hooks(network)
    )


def _filter_write(network: EgressNetwork, allowed: Sequence[Allowed]) -> None:
    """Write the filter's chains in one transaction, then hook them (each hook once).

    One `iptables-restore --noflush`: the chains are replaced whole, so a second worker of
    this host writing them as it starts never leaves them empty (open) for a moment, as a
    flush followed by appends would.
    """
    out, into = f"{network.chain}-OUT", f"{network.chain}-IN"
    # A chain line empties that chain (made if missing) within the transaction.
    rules = ["*filter", f":{out} - [0:0]", f":{into} - [0:0]"]
    for pair in allowed:
        port = f"-p tcp --dport {pair.port}"
        rules.append(f"-A {out} -d {pair.address}/32 {port} -j RETURN")
        rules.append(f"-A {into} -d {pair.address}/32 {port} -j ACCEPT")
    for resolver in resolvers():
        # Names, and nothing else, through the resolver the engine's DNS asks from inside
        # the sandbox's network (the sandbox's own queries go to that DNS, on loopback).
        rules += [f"-A {out} -d {resolver}/32 -p {p} --dport 53 -j RETURN" for p in ("udp", "tcp")]
    rules += [f"-A {out} -d {cidr} -j DROP" for cidr in BLOCKED_V4]
    rules += [f"-A {into} -j DROP", "COMMIT", ""]
    _restore("\n".join(rules))
    for family, chain, target in _hooks(network):
        rule = ("-i", network.bridge, "-j", target)
        if _iptables(family, "-C", chain, *rule).returncode != 0:
            _must(family, "-I", chain, "1", *rule)
    log.info(
        "sandbox network %s: filter set on %s (%d allowed)",
        network.name,
        network.bridge,
        len(allowed),
    )
