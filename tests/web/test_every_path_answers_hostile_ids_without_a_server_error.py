"""Every URL of the site, with the ids an attacker or a stale link would put in it, answers
without a server error, and another team's rows by their real ids are neither shown nor
changed: for a visitor signed out, a member, a team admin and an agent's token.

The paths are read from the URL configuration itself, so a view added later is swept too.
Each path parameter gets what its converter lets through but no row has (numbers past what a
database column holds, a UUID of no row, long, encoded or padded text), each query and form
field the views read gets the same kinds of value, and each row another team owns is named
by its own id, with the fields its own pages' forms carry.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls.converters import (
    IntConverter,
    PathConverter,
    SlugConverter,
    StringConverter,
    UUIDConverter,
)

from jazzmine.scripttools import load_tool_dir
from jazzmine_web.catalog.models import Sandbox, Tool
from jazzmine_web.catalog.services import script_tool_save
from jazzmine_web.playground.models import PlaygroundSession
from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_create
from jazzmine_web.runs.models import Run
from jazzmine_web.runs.services import run_create
from jazzmine_web.scripttools.models import TrialRun
from jazzmine_web.scripttools.services import trial_start
from jazzmine_web.teams.models import ApiToken
from jazzmine_web.teams.services import api_token_create
from tests.scripttools.samples import RSI
from tests.web.helpers import rival_team
from tests.web.routes import PARAMETER, route_fill, site_routes

pytestmark = pytest.mark.django_db

HOSTILE: dict[type, tuple[str, ...]] = {
    IntConverter: (
        "0",
        "2147483648",  # one past a 32-bit column
        "9223372036854775808",  # one past a 64-bit column
        "99999999999999999999999999",
        "00000000000000000000000001",
    ),
    UUIDConverter: ("00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"),
    SlugConverter: ("x" * 3000, "-", "_", "ab-1"),
    StringConverter: (
        "x" * 3000,
        "%00",
        "%C0%AE%C0%AE",
        "%E2%80%AE",
        "%F0%9F%92%A9",
        "..",
        " ",
        "%FF",
    ),
    PathConverter: ("../../etc/passwd", "a/b/c", "%00", "x" * 3000),
}
# The query and form fields the views read (filters, pages, ids, choices), each given every
# value below at once.
FIELDS = (
    "sandbox", "session", "page", "task", "person", "agent", "age", "decision", "until", "tag",
    "status", "source", "retry", "q", "language", "key", "format", "a", "b", "against", "after",
    "token", "timeout_seconds", "digest", "policy", "published", "next", "url", "wheels",
    "dependency", "action", "feedback", "note", "body", "name",
)  # fmt: skip
VALUES = (
    "99999999999999999999", "9223372036854775808", "-1", "\u00b2", "1_0", " 7", "1e9", "x" * 3000,
    "http://169.254.169.254/", "//evil.example/", "javascript:alert(1)",
)  # fmt: skip
MARK = "RIVAL-7731-not-for-you"
ACTIONS = ("approve", "edit", "reject", "withdraw", "cancel", "retry")


def _hostile_paths() -> list[str]:
    paths = set()
    for route, converters in site_routes():
        names = PARAMETER.findall(route)
        choices = [HOSTILE[type(converters[name])] for name in names]
        for values in itertools.product(*choices) if len(names) < 2 else zip(*choices):
            paths.add(route_fill(route, dict(zip(names, values))))
    return sorted(paths)


def _one_path_each() -> list[str]:
    """Every route once, with the first hostile value of each parameter."""
    return sorted(
        route_fill(route, {n: HOSTILE[type(c[n])][0] for n in PARAMETER.findall(route)})
        for route, c in site_routes()
    )


@pytest.fixture
def clients(member, team_admin, ecommerce) -> dict[str, Client]:
    signed_in = Client()
    signed_in.force_login(member)
    admin = Client()
    admin.force_login(team_admin)
    token = api_token_create(user=member, name="sweep").raw
    return {
        "signed out": Client(),
        "member": signed_in,
        "team admin": admin,
        "agent": Client(HTTP_AUTHORIZATION=f"Bearer {token}"),
    }


def _server_errors(clients: dict[str, Client], requests: list[tuple[str, str, Any]]) -> list[str]:
    errors = []
    for method, path, data in requests:
        for who, client in clients.items():
            try:
                response = getattr(client, method)(path, data)
            except Exception as exc:  # raised through the test client: a 500 when served
                errors.append(f"{method.upper()} {path[:90]} as {who}: {exc!r}"[:300])
                continue
            if response.status_code >= 500:
                errors.append(f"{method.upper()} {path[:90]} as {who}: {response.status_code}")
    return errors


def test_no_path_answers_a_server_error_to_ids_no_row_has(clients) -> None:
    paths = _hostile_paths()
    assert len(paths) > 100, paths  # the sweep sees the site
    requests = [(method, path, None) for path in paths for method in ("get", "post")]
    assert not "\n".join(_server_errors(clients, requests)[:60])


@pytest.mark.parametrize("value", VALUES, ids=lambda v: v[:24])
def test_no_query_or_form_field_makes_a_server_error(clients, value) -> None:
    fields = dict.fromkeys(FIELDS, value)
    requests = [
        request
        for path in _one_path_each()
        for request in (("get", path, fields), ("post", path, fields))
    ]
    assert not "\n".join(_server_errors(clients, requests)[:60])


# --- Another team's rows, by their real ids -----------------------------------------------


@pytest.fixture
def rival():
    """Another team, with one row of every kind a URL names, each carrying MARK."""
    _team, rex, sandbox, token = rival_team(MARK)
    script_tool, _ = script_tool_save(sandbox=sandbox, tool=load_tool_dir(RSI), author=rex)
    body = f"update_order_status('ORD-1001', 'shipped')\nemit_result({MARK!r})\n"
    return {
        "sandbox": sandbox,
        "tool": sandbox.tools.get(name="update_order_status"),
        "script_tool": script_tool,
        "trial": trial_start(tool=script_tool, user=rex, background=False),
        "run": run_create(sandbox=sandbox, user=rex, body=body, task=MARK, start=False),
        "session": PlaygroundSession.objects.create(user=rex, sandbox=sandbox, task=MARK),
        "submission": submission_create(
            sandbox=sandbox, user=rex, token=token, task=MARK, body=body
        ),
        "token": token,
    }


def _rival_paths(rival: dict[str, Any]) -> list[str]:
    """Every path that names a row, filled with the rival's ids (each action for decisions)."""

    def values(route: str, name: str) -> list[str]:
        if name == "pk":
            if route.startswith("catalog/tools/"):
                scripted = any(part in route for part in ("/script/", "/trials/", "/publish/"))
                return [str(rival["script_tool" if scripted else "tool"].pk)]
            if route.startswith("account/tokens/"):
                return [str(rival["token"].pk)]
            return [str(rival["sandbox"].pk)]
        if name == "action":
            return list(ACTIONS)
        if name == "number":
            return ["1"]
        return [str(rival[name.removesuffix("_id")].pk)]

    paths = []
    for route, _converters in site_routes():
        names = PARAMETER.findall(route)
        if names:
            for chosen in itertools.product(*(values(route, name) for name in names)):
                paths.append(route_fill(route, dict(zip(names, chosen))))
    return paths


def _state(rival: dict[str, Any]) -> dict[str, Any]:
    def row(model: Any, pk: Any) -> dict[str, Any]:
        found = model.objects.filter(pk=pk).values().first() or {}
        return {k: v for k, v in found.items() if k != "last_used_at"}

    return {
        "sandbox": row(Sandbox, rival["sandbox"].pk),
        "tools": list(Tool.objects.filter(sandbox=rival["sandbox"]).order_by("pk").values()),
        "run": row(Run, rival["run"].pk),
        "session": row(PlaygroundSession, rival["session"].pk),
        "trial": row(TrialRun, rival["trial"].pk),
        "submission": row(Submission, rival["submission"].pk),
        "token": row(ApiToken, rival["token"].pk),
    }


def _leaks(clients: dict[str, Client], paths: list[str], data: dict[str, Any]) -> list[str]:
    leaks = []
    for path in paths:
        for who, client in clients.items():
            for method in ("get", "post"):
                response = client.post(path, data) if method == "post" else client.get(path)
                shown = MARK in response.content.decode(errors="replace")
                if response.status_code < 300 or response.status_code >= 500 or shown:
                    leaks.append(f"{method.upper()} {path} as {who}: {response.status_code}")
    return leaks


def test_another_teams_rows_are_neither_shown_nor_changed(clients, rival) -> None:
    paths = _rival_paths(rival)
    assert len(paths) > 30
    before = _state(rival)
    # What a form of the rival's own pages carries: an attacker copies it.
    data = {
        "digest": rival["tool"].code_digest,
        "note": MARK,
        "reason": MARK,
        "body": f"emit_result({MARK!r})",
        "name": "renamed",
        "tools_seen_sent": "1",
        "tools_seen": "update_order_status",
        "published": "1",
        "confirm": "1",
    }
    assert not "\n".join(_leaks(clients, paths, data))
    assert _state(rival) == before


def test_the_rivals_own_admin_is_shown_them(rival) -> None:
    """The sweep above can see a leak: the same requests by the rows' owner are answered."""
    owner = Client()
    owner.force_login(get_user_model().objects.get(username="rex"))
    leaks = _leaks({"rex": owner}, _rival_paths(rival), {})
    assert sum(" 200" in leak for leak in leaks) > 10
