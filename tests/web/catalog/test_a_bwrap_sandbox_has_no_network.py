"""A bubblewrap sandbox with network is refused when saved, not only each time it runs.

bwrap could only share the host's own network (its loopback Redis and PostgreSQL included), so
its runner refuses such a run; the form, the admin site and the services say so up front.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from jazzmine_web.catalog.models import Backend, Sandbox
from jazzmine_web.catalog.services import sandbox_create, sandbox_update
from tests.web.helpers import sandbox_form

pytestmark = pytest.mark.django_db

WHY = "bubblewrap sandbox cannot have network access"


def test_the_new_sandbox_form_refuses_bwrap_with_network(client, team, team_admin) -> None:
    client.force_login(team_admin)
    post = sandbox_form(team=team.pk, name="fresh", backend="bwrap", network="on")
    response = client.post("/catalog/sandboxes/new/", post)
    assert response.status_code == 422
    assert WHY in response.content.decode()
    assert not Sandbox.objects.filter(name="fresh").exists()
    # Either alone is fine, twice in a row.
    for name, changes in (("fresh", {"backend": "bwrap"}), ("net", {"network": "on"})):
        response = client.post(
            "/catalog/sandboxes/new/", sandbox_form(team=team.pk, name=name, **changes)
        )
        assert response.status_code == 302, response.content.decode()[:500]
    assert Sandbox.objects.get(name="fresh").backend == "bwrap"
    assert Sandbox.objects.get(name="net").network is True


@pytest.mark.parametrize(
    ("stored", "post"),
    [
        ({"network": True}, {"network": "on", "backend": "bwrap"}),  # docker+net → bwrap
        ({"backend": "bwrap"}, {"network": "on", "backend": "bwrap"}),  # bwrap → +net
        ({}, {"network": "on", "backend": "bwrap"}),  # both at once
    ],
)
def test_the_edit_form_refuses_it_and_keeps_what_was_stored(
    client, team_admin, empty_sandbox, stored, post
) -> None:
    Sandbox.objects.filter(pk=empty_sandbox.pk).update(**stored)
    client.force_login(team_admin)
    response = client.post(f"/catalog/sandboxes/{empty_sandbox.pk}/edit/", sandbox_form(**post))
    assert response.status_code == 422
    assert WHY in response.content.decode()
    empty_sandbox.refresh_from_db()
    assert (empty_sandbox.network, empty_sandbox.backend) == (
        stored.get("network", False),
        stored.get("backend", "docker"),
    )


def test_the_services_refuse_it_however_it_is_spelled(team, team_admin, empty_sandbox) -> None:
    with pytest.raises(ValidationError, match=WHY):
        sandbox_create(team=team, name="a", actor=team_admin, backend="bwrap", network=True)
    with pytest.raises(ValidationError, match=WHY):
        sandbox_create(team=team, name="b", actor=team_admin, backend=Backend.BWRAP, network=1)
    assert not Sandbox.objects.filter(name__in=["a", "b"]).exists()
    sandbox_update(sandbox=empty_sandbox, actor=team_admin, backend="bwrap")
    with pytest.raises(ValidationError, match=WHY):
        sandbox_update(sandbox=empty_sandbox, actor=team_admin, network=True)
    empty_sandbox.refresh_from_db()
    assert empty_sandbox.network is False
    # Turning network off and moving to bwrap in one change is fine, and so is going back.
    sandbox_update(sandbox=empty_sandbox, actor=team_admin, backend="docker", network=True)
    with pytest.raises(ValidationError, match=WHY):
        sandbox_update(sandbox=empty_sandbox, actor=team_admin, backend="bwrap")
    assert sandbox_update(sandbox=empty_sandbox, actor=team_admin, backend="bwrap", network=False)


def test_an_older_bwrap_sandbox_with_network_can_still_be_edited_otherwise(
    team_admin, empty_sandbox
) -> None:
    # Saved before this rule: other changes are not blocked (its runs are refused, and say why).
    Sandbox.objects.filter(pk=empty_sandbox.pk).update(backend="bwrap", network=True)
    empty_sandbox.refresh_from_db()
    assert sandbox_update(sandbox=empty_sandbox, actor=team_admin, description="kept")
