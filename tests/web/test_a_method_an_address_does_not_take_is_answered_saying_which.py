"""A request with a method its address does not take is answered saying which it takes.

Django's own answer was an empty 405: an agent calling the API with the wrong verb got an empty
`text/html` body where every other API answer is JSON, and a person who pressed Enter in the
address bar after a refused form (shown at the address it was posted to) got the browser's
blank error page. Swept over every route of the site, so a view added later is held to it.
"""

from __future__ import annotations

import uuid

import pytest
from django.test import Client

from jazzmine_web.teams.services import api_token_create
from tests.web.routes import PARAMETER, route_fill, site_routes

pytestmark = pytest.mark.django_db

METHODS = ("get", "put", "patch", "delete", "options")


def _paths(ecommerce) -> list[str]:
    """Every route once, naming the team's own sandbox and tool, or a UUID of no row."""
    tool = ecommerce.tools.get(name="get_orders")
    values = {"pk": str(ecommerce.pk), "tool_pk": str(tool.pk)}
    paths = []
    for route, _converters in site_routes():
        names = PARAMETER.findall(route)
        filled = {
            n: values.get(n, str(tool.pk) if n.endswith("pk") else str(uuid.uuid4())) for n in names
        }
        paths.append(route_fill(route, filled))
    return paths


@pytest.fixture
def clients(member, ecommerce) -> dict[str, Client]:
    person = Client()
    person.force_login(member)
    token = api_token_create(user=member, name="methods").raw
    return {"member": person, "agent": Client(HTTP_AUTHORIZATION=f"Bearer {token}")}


def test_every_refused_method_is_answered_saying_which_methods_the_address_takes(
    clients, ecommerce
) -> None:
    refused, problems = 0, []
    for path in _paths(ecommerce):
        for who, client in clients.items():
            for method in METHODS:
                response = getattr(client, method)(path)
                if response.status_code != 405:
                    continue
                refused += 1
                where = f"{method.upper()} {path} as {who}"
                allowed = response.get("Allow", "")
                if not allowed:
                    problems.append(f"{where}: no Allow header")
                if path.startswith("/api/"):
                    if response["Content-Type"] != "application/json":
                        problems.append(f"{where}: {response['Content-Type']}, not JSON")
                        continue
                    error = response.json()["error"]
                    named = all(m in error["message"] for m in allowed.split(", "))
                    if error["code"] != "method_not_allowed" or not named:
                        problems.append(f"{where}: {error}")
                else:
                    html = response.content.decode()
                    if 'id="method-not-allowed"' not in html or 'href="/"' not in html:
                        problems.append(f"{where}: {html[:80]!r}")
    assert refused > 20  # the sweep meets the site's POST-only addresses
    assert not "\n".join(problems[:40])


def test_an_agent_using_the_wrong_verb_is_told_the_right_one(clients) -> None:
    response = clients["agent"].delete("/api/v1/submissions/")
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    message = response.json()["error"]["message"]
    assert message == "DELETE is not allowed at /api/v1/submissions/: this endpoint takes POST."


def test_a_visit_to_a_form_only_address_keeps_the_studio_and_changes_nothing(
    clients, ecommerce
) -> None:
    before = ecommerce.secret_values.count() if hasattr(ecommerce, "secret_values") else None
    response = clients["member"].get(f"/catalog/sandboxes/{ecommerce.pk}/secrets/")
    html = response.content.decode()
    assert response.status_code == 405 and response["Allow"] == "POST"
    assert "takes what a form or button sends (POST), not a visit" in html
    assert 'href="/account/tokens/"' in html  # the navigation
    if before is not None:
        assert ecommerce.secret_values.count() == before
