"""A network-enabled sandbox reaches the public internet only: not this host, not a LAN.

It joined Docker's default bridge, from which a process reached every service of the host
listening beyond loopback (a web process on 0.0.0.0, here a listener the test opens) through
the bridge's gateway or the host's own address, the cloud's metadata service, and the private
network where a team's Redis and PostgreSQL live. Now it gets a bridge of its own, filtered
in the host's kernel (`jazzmine.sandbox.egress`), with an exception per `host:port` the
operator allows (the keychain). The scripts here run unrestricted, with sockets: the walls
under test are the network's, not the harness's.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import socket
import subprocess
import threading
from ipaddress import IPv4Address

import docker.errors
import pytest

from jazzmine.sandbox import RunRequest, owner
from jazzmine.sandbox.docker_runner import DockerOneShot
from jazzmine.sandbox.egress import (
    BLOCKED_V4,
    NETWORK_LABEL,
    Allowed,
    EgressNetwork,
    EgressUnavailable,
    _filter_remove,
    _filter_write,
    _network_ensure,
    allowed_from,
    egress_allow,
    egress_network,
    egress_networks_remove,
    resolvers,
)
from jazzmine.sandbox.owner import DEPLOYMENT_LABEL, owner_labels, owner_set
from jazzmine.sandbox.pool import WarmPool

from .helpers import collect

pytestmark = pytest.mark.docker

PROBE = """
import json, socket
def probe(host, port):
    try:
        socket.create_connection((host, port), timeout=1.5).close()
        return "open"
    except OSError as exc:
        return type(exc).__name__
targets = json.loads(TARGETS)
emit_result({name: probe(host, port) for name, (host, port) in targets.items()})
"""


@pytest.fixture
def listener():
    """A TCP service of the host on every address, as a web process on 0.0.0.0 is."""
    server = socket.create_server(("0.0.0.0", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def address_of(interface: str) -> str:
    out = subprocess.run(
        ["ip", "-4", "-o", "addr", "show", "dev", interface], capture_output=True, text=True
    ).stdout
    return out.split("inet ", 1)[1].split("/", 1)[0]


def host_address() -> str:
    route = subprocess.run(["ip", "-4", "route", "show", "default"], capture_output=True, text=True)
    return address_of(route.stdout.split(" dev ", 1)[1].split()[0])


def probed(runner, image, limits, targets: dict[str, tuple[str, int]]) -> dict[str, str]:
    script = f"TARGETS = {json.dumps(json.dumps(targets))}\n{PROBE}"
    networked = dataclasses.replace(limits, network=True, timeout_seconds=30)
    events = asyncio.run(
        collect(
            DockerOneShot(runner, image, networked).run(
                RunRequest(script=script, unrestricted=True)
            )
        )
    )
    results = [e.data for e in events if e.type == "result"]
    assert results, [e.to_dict() for e in events]
    return results[0]


@pytest.fixture
def network(docker_client) -> EgressNetwork:
    return EgressNetwork.for_engine(str(docker_client.info()["ID"]))


@pytest.fixture(autouse=True)
def nothing_allowed():
    egress_allow(())
    yield
    egress_allow(())


def test_the_host_is_out_of_reach_on_every_address_it_listens_on(
    hostile_runner, image, limits, listener, docker_client, network
):
    egress_network(docker_client)
    found = probed(
        hostile_runner,
        image,
        limits,
        {
            "docker0": (address_of("docker0"), listener),
            "own gateway": (address_of(network.bridge), listener),
            "host": (host_address(), listener),
        },
    )
    assert found == {
        "docker0": "TimeoutError",
        "own gateway": "TimeoutError",
        "host": "TimeoutError",
    }


def test_an_allowed_address_and_port_is_reached_and_no_other_port(
    hostile_runner, image, limits, listener
):
    gateway = address_of("docker0")
    other = socket.create_server(("0.0.0.0", 0))
    try:
        egress_allow(allowed_from([f"http://{gateway}:{listener}"]))
        found = probed(
            hostile_runner,
            image,
            limits,
            {"allowed": (gateway, listener), "other port": (gateway, other.getsockname()[1])},
        )
    finally:
        other.close()
    assert found == {"allowed": "open", "other port": "TimeoutError"}


def drops(network: EgressNetwork) -> dict[str, int]:
    out = subprocess.run(
        ["iptables", "-w", "5", "-n", "-v", "-x", "-L", f"{network.chain}-OUT"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    counts = {}
    for line in out.splitlines()[2:]:
        fields = line.split()
        if fields and fields[2] == "DROP":
            counts[fields[-1]] = int(fields[0])
    return counts


@pytest.mark.parametrize(
    ("host", "cidr"),
    [
        ("10.255.255.1", "10.0.0.0/8"),
        ("169.254.169.254", "169.254.0.0/16"),
        ("192.168.77.1", "192.168.0.0/16"),
        ("172.31.1.1", "172.16.0.0/12"),
        ("100.100.100.200", "100.64.0.0/10"),
    ],
)
def test_private_and_metadata_addresses_are_dropped_on_their_way_out(
    hostile_runner, image, limits, docker_client, network, host, cidr
):
    egress_network(docker_client)
    before = drops(network)[cidr]
    found = probed(hostile_runner, image, limits, {"target": (host, 80)})
    assert found["target"] != "open"
    assert drops(network)[cidr] > before


def test_a_sandbox_has_no_ipv6_and_cannot_reach_another_on_its_network(
    hostile_runner, image, limits
):
    script = (
        "import socket\n"
        "try:\n"
        "    socket.socket(socket.AF_INET6, socket.SOCK_STREAM).connect(('::1', 1))\n"
        "    v6 = 'connected'\n"
        "except OSError as exc:\n"
        "    v6 = type(exc).__name__\n"
        "emit_result({'v6': v6, 'off': open('/proc/sys/net/ipv6/conf/all/disable_ipv6').read().strip()})\n"
    )
    networked = dataclasses.replace(limits, network=True)
    events = asyncio.run(
        collect(
            DockerOneShot(hostile_runner, image, networked).run(
                RunRequest(script=script, unrestricted=True)
            )
        )
    )
    result = next(e.data for e in events if e.type == "result")
    assert result["off"] == "1" and result["v6"] != "connected"


def test_the_filter_is_written_again_when_a_firewall_reload_dropped_it(docker_client, network):
    egress_network(docker_client)
    subprocess.run(
        ["iptables", "-w", "5", "-D", "INPUT", "-i", network.bridge, "-j", f"{network.chain}-IN"],
        check=True,
    )
    egress_network(docker_client)
    check = [
        "iptables",
        "-w",
        "5",
        "-C",
        "INPUT",
        "-i",
        network.bridge,
        "-j",
        f"{network.chain}-IN",
    ]
    assert subprocess.run(check).returncode == 0


def test_a_network_of_its_name_with_other_options_is_refused(docker_client):
    impostor = EgressNetwork.for_engine("not-this-engine")
    made = docker_client.networks.create(impostor.name, driver="bridge")
    try:
        with pytest.raises(EgressUnavailable, match="other options"):
            _network_ensure(docker_client, impostor)
    finally:
        made.remove()


@pytest.mark.parametrize("entry", ["172.17.0.1", "http://", "no-such-host.invalid:80", "[::1]:80"])
def test_an_allowance_that_names_no_ipv4_address_and_port_is_refused(entry):
    with pytest.raises(ValueError):
        allowed_from([entry])


def test_allowances_read_urls_and_host_port_pairs():
    assert allowed_from(["http://127.0.0.1:8000", "127.0.0.2:9", "https://127.0.0.3"]) == (
        Allowed(IPv4Address("127.0.0.1"), 8000),
        Allowed(IPv4Address("127.0.0.2"), 9),
        Allowed(IPv4Address("127.0.0.3"), 443),
    )


def test_one_sandbox_cannot_reach_another_on_the_same_network(
    hostile_runner, image, limits, docker_client, network
):
    egress_network(docker_client)
    # A neighbour listening on the network, started outside the runner: only its address matters.
    serve = (
        "import socket, time\n"
        "s = socket.create_server(('0.0.0.0', 8080))\n"
        "s.settimeout(60)\n"
        "while True:\n"
        "    try: s.accept()[0].close()\n"
        "    except OSError: pass\n"
    )
    neighbour = docker_client.containers.run(
        image, ["python3", "-c", serve], network=network.name, detach=True, remove=True
    )
    try:
        neighbour.reload()
        address = neighbour.attrs["NetworkSettings"]["Networks"][network.name]["IPAddress"]
        found = probed(hostile_runner, image, limits, {"neighbour": (address, 8080)})
    finally:
        neighbour.kill()
    assert found == {"neighbour": "TimeoutError"}


def test_a_rewrite_never_leaves_the_filter_open_for_a_moment(docker_client, network):
    # A second worker of the host writes the chains as it starts, while sandboxes run.
    egress_network(docker_client)
    done = threading.Event()

    def rewrite() -> None:
        for _ in range(15):
            _filter_write(network, ())
        done.set()

    writer = threading.Thread(target=rewrite)
    writer.start()
    seen = []
    while not done.is_set():
        listed = subprocess.run(
            ["iptables", "-w", "5", "-S", f"{network.chain}-OUT"], capture_output=True, text=True
        ).stdout
        seen.append(sum(f"-d {cidr} -j DROP" in listed for cidr in BLOCKED_V4))
    writer.join()
    assert len(seen) > 5 and set(seen) == {len(BLOCKED_V4)}, seen


@pytest.mark.parametrize("path", ["one-shot", "warm pool"])
def test_a_worker_that_cannot_set_the_filter_starts_no_networked_sandbox(
    runner, image, limits, monkeypatch, path
):
    def unavailable(_client):
        raise EgressUnavailable("cannot set the sandboxes' filter (the worker is not root)")

    monkeypatch.setattr("jazzmine.sandbox.containers.egress_network", unavailable)
    networked = dataclasses.replace(limits, network=True)
    request = RunRequest(script="emit_result(1)\n")

    async def run() -> list:
        if path == "one-shot":
            return await collect(DockerOneShot(runner, image, networked).run(request))
        async with WarmPool(runner, image, networked, size=1) as pool:
            return await collect(pool.run(request))

    events = asyncio.run(run())
    assert events[-1].type == "exit", events
    assert events[-1].data["outcome"] == "engine_unavailable"
    assert "not root" in str(events[-1].data)
    assert not [e for e in events if e.type == "result"]


def chain_rules(network: EgressNetwork) -> list[str]:
    return subprocess.run(
        ["iptables", "-w", "5", "-S", f"{network.chain}-OUT"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()


@pytest.fixture
def as_deployment():
    """Act as a worker of the deployment named, as `owner_set` at a worker's start does."""
    before = owner_labels()

    def act(name: str) -> None:
        owner_set("worker1@host", "boot", name)

    yield act
    owner._owner.clear()
    owner._owner.update(before)


def test_deployments_on_one_engine_never_rewrite_each_others_filter(docker_client, as_deployment):
    # Two deployments' workers on one engine (a keychain each): each wrote the one filter
    # whole with its own allowances, so the last to start decided what every sandbox of
    # both reached, widening one's walls and cutting the other's keychain off.
    first = allowed_from(["127.0.0.1:8101"])
    second = allowed_from(["127.0.0.1:8102"])
    as_deployment("first-deployment")
    egress_allow(first)
    one = EgressNetwork.named(egress_network(docker_client))
    as_deployment("second-deployment")
    egress_allow(second)
    other = EgressNetwork.named(egress_network(docker_client))
    assert one != other
    as_deployment("first-deployment")
    egress_allow(first)
    assert egress_network(docker_client) == one.name  # the same one, still there
    ones, others = chain_rules(one), chain_rules(other)
    assert any("127.0.0.1/32" in rule and "8101" in rule for rule in ones), ones
    assert not any("8102" in rule for rule in ones), ones
    assert any("127.0.0.1/32" in rule and "8102" in rule for rule in others), others
    assert not any("8101" in rule for rule in others), others
    for network in (one, other):
        docker_client.networks.get(network.name).remove()
        _filter_remove(network)


def test_a_deployments_network_of_allowances_it_no_longer_has_goes(
    docker_client, as_deployment, image
):
    # Each allowance list made a network of its own, never removed: each held one of the
    # engine's address pools, and once some thirty were taken no sandbox network could start.
    as_deployment("changing-deployment")
    egress_allow(allowed_from(["127.0.0.1:8103"]))
    old = EgressNetwork.named(egress_network(docker_client))
    egress_allow(allowed_from(["127.0.0.1:8104"]))
    busy = EgressNetwork.named(egress_network(docker_client))
    # One a container is on stays while it is: a sandbox of the old allowances still runs.
    sleeper = docker_client.containers.run(
        image, ["sleep", "60"], network=busy.name, detach=True, remove=True
    )
    try:
        egress_allow(allowed_from(["127.0.0.1:8105"]))
        new = EgressNetwork.named(egress_network(docker_client))
        names = {n.name for n in docker_client.networks.list()}
        assert new.name in names and busy.name in names and old.name not in names
        assert subprocess.run(["iptables", "-w", "5", "-S", f"{old.chain}-OUT"]).returncode != 0
    finally:
        sleeper.kill()
    # And one a release before made, which named no deployment.
    legacy = docker_client.networks.create("jazzmine-egress-0123abcd", labels={NETWORK_LABEL: "1"})
    egress_allow(())
    egress_network(docker_client)  # now it goes too
    names = {n.name for n in docker_client.networks.list()}
    assert busy.name not in names and new.name not in names and legacy.name not in names


def test_resolvers_are_the_hosts_own_off_loopback(tmp_path):
    conf = tmp_path / "resolv.conf"
    conf.write_text(
        "# written by hand\nnameserver 10.255.255.53\nnameserver 127.0.0.53\n"
        "nameserver fe80::1\nnameserver not-an-address\nsearch example\n"
        "nameserver 192.168.1.1 # the router\nnameserver 10.255.255.53\n"
    )
    upstream = tmp_path / "upstream.conf"
    upstream.write_text("nameserver 172.16.0.2\n")
    assert resolvers([str(conf), str(upstream), str(tmp_path / "missing")]) == [
        IPv4Address("10.255.255.53"),
        IPv4Address("192.168.1.1"),
        IPv4Address("172.16.0.2"),
    ]


def test_names_resolve_in_a_network_enabled_sandbox_as_on_the_default_bridge(
    hostile_runner, image, limits, docker_client, network
):
    # The engine's DNS asks the host's resolver from inside the sandbox's network; that
    # resolver is on a private address (here 10.255.255.53), which the filter dropped, so
    # no name resolved at all. Only port 53 of that address is let through.
    egress_network(docker_client)
    rules = chain_rules(network)
    for resolver in resolvers():
        assert any(f"{resolver}/32" in rule and "--dport 53" in rule for rule in rules), rules
    lookup = (
        "import socket\n"
        "try:\n"
        "    found = sorted({i[4][0] for i in socket.getaddrinfo('pypi.org', 443, socket.AF_INET)})\n"
        "    said = 'resolved' if found else 'nothing'\n"
        "except OSError as exc:\n"
        "    said = type(exc).__name__\n"
    )
    bridged = docker_client.containers.run(
        image, ["python3", "-c", lookup + "print(said)"], network="bridge", remove=True
    )
    script = lookup + "emit_result(said)\n"
    networked = dataclasses.replace(limits, network=True, timeout_seconds=30)
    events = asyncio.run(
        collect(
            DockerOneShot(hostile_runner, image, networked).run(
                RunRequest(script=script, unrestricted=True)
            )
        )
    )
    result = next(e.data for e in events if e.type == "result")
    assert result == bridged.decode().strip()


def test_the_networks_of_test_sessions_that_ended_are_removed_at_a_sessions_end(docker_client):
    # One a session (each its own deployment): thirty sessions on one engine took every
    # address pool, and the next network-enabled sandbox could not start (CI's run failed).
    import os

    from tests.conftest import test_deployment_ended

    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid no process has now
    made = {
        owner: docker_client.networks.create(
            f"jazzmine-egress-{index:08x}", labels={NETWORK_LABEL: "1", DEPLOYMENT_LABEL: owner}
        )
        for index, owner in enumerate(
            [f"test-{gone.pid}", f"test-{gone.pid}-fixture", "team-prod", f"test-{os.getpid()}-x"]
        )
    }
    try:
        ended = test_deployment_ended(f"test-{os.getpid()}")
        assert egress_networks_remove(docker_client, ended) >= 3
        names = {n.name for n in docker_client.networks.list()}
        assert made["team-prod"].name in names  # another deployment's stays
        assert not {made[o].name for o in made if o != "team-prod"} & names
    finally:
        for network in made.values():
            with contextlib.suppress(docker.errors.NotFound):
                network.remove()
