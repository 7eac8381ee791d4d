"""A network-enabled sandbox's runs work through the worker, each on the filtered network.

Its containers (the warm pool's included) join the engine's `jazzmine-egress-…` bridge, never
Docker's default one, from which they reached the host and its private network
(`jazzmine.sandbox.egress`; the walls themselves are tested in tests/sandbox).
"""

from __future__ import annotations

import docker
import pytest
from django.conf import settings

from jazzmine.sandbox.containers import RUN_LABEL
from jazzmine.sandbox.egress import EgressNetwork
from jazzmine_web.catalog.services import sandbox_update
from jazzmine_web.runs.models import RunStatus
from jazzmine_web.runs.services import run_create
from jazzmine_web.workers.services import sandbox_egress_allowed

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

BODY = """\
orders = get_orders(status="delivered")
emit_result({"count": len(orders.data["orders"])})
"""


def networked_modes(client: docker.DockerClient) -> dict[str, str]:
    """Return the network of every sandbox container that has one, by container name.

    The worker's pools of other sandboxes run theirs without a network ("none").
    """
    modes = {}
    # One listing (no inspect per container): a pool removes its containers as runs end.
    for summary in client.api.containers(all=True, filters={"label": RUN_LABEL}):
        mode = summary["HostConfig"]["NetworkMode"]
        if mode != "none":
            modes[summary["Names"][0]] = mode
    return modes


def test_two_runs_in_a_row_succeed_and_every_container_is_on_the_filtered_network(
    ecommerce, member, team_admin, worker
) -> None:
    sandbox_update(sandbox=ecommerce, network=True, actor=team_admin)
    client = docker.from_env()
    # The network of this deployment and its allowances (the keychain's address among them).
    egress = EgressNetwork.for_engine(
        str(client.info()["ID"]), sandbox_egress_allowed(), settings.JAZZMINE_DEPLOYMENT
    ).name
    seen: set[str] = set()
    for _ in range(2):
        run = run_create(sandbox=ecommerce, user=member, body=BODY)
        assert worker.future(run.pk).result(timeout=180) == RunStatus.SUCCEEDED
        run.refresh_from_db()
        assert run.result == {"count": 2}
        modes = networked_modes(client)
        assert set(modes.values()) <= {egress}, modes
        seen |= set(modes.values())
    assert seen == {egress}  # the pool's next sandbox waits on it
