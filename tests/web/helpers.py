"""Helpers the web suites share: the demo module, uploaded files, websockets, a spinning run."""

from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import docker
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.models import F
from django.test import Client

from jazzmine.sandbox.owner import OWNER_LABEL
from jazzmine_web.asgi import application
from jazzmine_web.catalog.importer import SourceFile
from jazzmine_web.catalog.models import Tool
from jazzmine_web.runs.models import RunEvent
from jazzmine_web.runs.services import run_create, run_record_event
from jazzmine_web.teams.services import membership_set
from tests.waiting import wait_until

DEMO = Path(settings.BASE_DIR) / "demo" / "ecommerce.py"


def source_file(name: str, text: str | bytes) -> SourceFile:
    """Return an upload of one file, as the importer receives it."""
    data = text.encode() if isinstance(text, str) else text
    return SourceFile(name=name, size=len(data), data=data)


def script_tools_zip_post(user, sandbox, *tool_jsons: dict[str, Any]):
    """Post a zip of script tools (each tool.json as given, beside a script.py) to the import
    page as `user`; return the response (a refusal's, not its exception)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for tool_json in tool_jsons:
            archive.writestr(f"{tool_json['name']}/tool.json", json.dumps(tool_json))
            archive.writestr(f"{tool_json['name']}/script.py", "print('{}')\n")
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client.post(
        "/catalog/script-tools/import/",
        {"sandbox": sandbox.pk, "archive": SimpleUploadedFile("t.zip", buffer.getvalue())},
    )


def staff_browser(user, *apps: str) -> Client:
    """Make the user staff with every permission of these apps; return their logged-in browser."""
    from django.contrib.auth.models import Permission

    user.is_staff = True
    user.save()
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label__in=apps))
    client = Client()
    client.force_login(user)
    return client


def teammate(team, role: str, username: str = "grace"):
    """Return a new user who holds `role` in the team."""
    user = get_user_model().objects.create_user(username=username, password="x" * 12)
    membership_set(team=team, user=user, role=role)
    return user


def accept_code(sandbox, *names: str) -> None:
    """Accept the current code of a sandbox's tools (all, or those named) and its dependencies,
    as a team admin would: fixtures that stand for what an admin set up get their secrets."""

    rows = sandbox.tools.all() if not names else sandbox.tools.filter(name__in=names)
    code_accepted_mark(rows)
    type(sandbox).objects.filter(pk=sandbox.pk).update(accepted_dependencies=F("dependencies"))
    sandbox.refresh_from_db(fields=["dependencies", "accepted_dependencies"])  # keeps .team


def tool_accept_post(client, tool):
    """Press Accept this code on a tool's page: the form carries the digest the page showed."""
    tool.refresh_from_db()
    return client.post(f"/catalog/tools/{tool.pk}/accept/", {"digest": tool.code_digest})


def sandbox_accept_post(client, sandbox):
    """Press Accept these dependencies on a sandbox's page: the form carries the list shown."""
    sandbox.refresh_from_db(fields=["dependencies"])  # keeps .team
    url = f"/catalog/sandboxes/{sandbox.pk}/accept-dependencies/"
    return client.post(url, {"dependency": list(sandbox.dependencies)})


def tool_form_post(client, tool, **changes) -> None:
    """Save a tool through its edit page, as the logged-in person would: the form as the page
    fills it in, with `changes` typed over it (a script tool's page for a script tool)."""
    url = (
        f"/catalog/tools/{tool.pk}/script/edit/"
        if tool.kind == "script"
        else (f"/catalog/tools/{tool.pk}/edit/")
    )
    form_post(client, url, **changes)


def sandbox_form_post(client, sandbox, **changes) -> None:
    """Save a sandbox through its edit page, as the logged-in person would: the form as the
    page fills it in, with `changes` typed over it."""
    form_post(client, f"/catalog/sandboxes/{sandbox.pk}/edit/", **changes)


def form_post(client, url: str, **changes) -> None:
    """Post the form of a page as it fills it in, with `changes` typed over it; expect a save."""
    response = client.post(url, form_data(client, url, **changes))
    assert response.status_code == 302, (
        response.context["form"].errors if response.context else response.status_code
    )


def form_refused(client, url: str, **changes):
    """Post the form of a page with `changes` typed over it; expect a refusal (422), returned."""
    response = client.post(url, form_data(client, url, **changes))
    assert response.status_code == 422, response.status_code
    return response


def form_data(client, url: str, **changes) -> dict[str, Any]:
    """Return the form of a page as it fills it in, with `changes` typed over it, as posted."""
    import json

    page = client.get(url)
    assert page.status_code == 200, page.status_code
    data = {k: v for k, v in page.context["form"].initial.items() if v is not None}
    data.update(changes)
    posted: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, bool):
            if value:
                posted[key] = "on"
        elif isinstance(value, dict) or (
            value and isinstance(value, list) and isinstance(value[0], dict)
        ):
            posted[key] = json.dumps(value)
        elif isinstance(value, list):
            posted[key] = "\n".join(map(str, value))
        else:
            posted[key] = value
    return posted


def signed_in(user) -> Client:
    """Return a browser signed in as the user."""
    client = Client()
    client.force_login(user)
    return client


def ws_headers(user) -> list[tuple[bytes, bytes]]:
    """Return the headers of a logged-in browser's websocket handshake."""
    client = Client()
    client.force_login(user)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    return [(b"cookie", cookie.encode()), (b"origin", b"http://localhost")]


async def playground_socket(user, *, timeout: float = 1) -> WebsocketCommunicator:
    """Return the playground's websocket, connected as the user's logged-in browser."""
    headers = await database_sync_to_async(ws_headers)(user)
    ws = WebsocketCommunicator(application, "/ws/playground/", headers=headers)
    connected, _ = await ws.connect(timeout=timeout)
    assert connected
    return ws


async def follow(ws: WebsocketCommunicator, run_id: object) -> None:
    """Follow a run on a playground socket, and take its pane's first two messages."""
    await ws.send_json_to({"type": "follow", "run_id": str(run_id), "after": 0})
    assert (await ws.receive_json_from(timeout=5))["type"] == "run_html"
    assert (await ws.receive_json_from(timeout=5))["type"] == "status"


async def still_answering(ws: WebsocketCommunicator, sandbox) -> None:
    """Assert that a playground socket still answers its next message (a script to check)."""
    await ws.send_json_to({"type": "validate", "sandbox": sandbox.pk, "body": "x = 1"})
    assert (await ws.receive_json_from(timeout=5))["type"] != "error"


@database_sync_to_async
def playground_rows() -> tuple[int, int, int]:
    """Return how many playground sessions, attempts and runs are stored."""
    from jazzmine_web.playground.models import Attempt, PlaygroundSession
    from jazzmine_web.runs.models import Run

    return PlaygroundSession.objects.count(), Attempt.objects.count(), Run.objects.count()


async def run_socket(run, user) -> WebsocketCommunicator:
    """Return a run page's websocket, connected as the user, past its first status."""
    headers = await database_sync_to_async(ws_headers)(user)
    ws = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=headers)
    connected, _ = await ws.connect()
    assert connected
    await ws.receive_from(timeout=5)  # the stored events and the status the run has now
    return ws


async def collect_until(ws: WebsocketCommunicator, kind: str, timeout: float = 120) -> list[dict]:
    """Return the socket's messages up to and with the first of type `kind` (none an error)."""
    messages = []
    while True:
        message = await ws.receive_json_from(timeout=timeout)
        messages.append(message)
        if message["type"] == kind:
            return messages
        assert message["type"] != "error", message


# A script that runs until it is stopped, saying so now and then (a log line proves it started).
SPIN = "n = 0\nwhile True:\n    n += 1\n    if n % 2000000 == 0:\n        emit_log(n)\nemit_result(n)\n"


def until_spinning(run_id: object) -> None:
    """Wait until a run of SPIN is really running: its first log line is stored."""
    wait_until(
        lambda: RunEvent.objects.filter(run_id=run_id, type="log").exists(),
        timeout=120,
        message="the script never started spinning",
    )


def running_sandboxes() -> set[str]:
    """Return the ids of the run sandboxes running on the machine's Docker engine."""
    client = docker.from_env()
    return {c.id for c in client.containers.list(filters={"label": "jazzmine.run"})}


def owned_containers(worker) -> list[str]:
    """Return the containers a worker owns: its sandboxes, its pools', its trials'."""
    client = docker.from_env()
    found = client.containers.list(
        all=True, filters={"label": f"{OWNER_LABEL}={worker_name(worker)}"}
    )
    return [c.name for c in found]


def worker_name(worker) -> str:
    """Return a test worker's name as Celery expands it."""
    return worker.name.replace("%h", socket.gethostname())


# The grace of the `graced` worker (tests/web/conftest.py), in seconds.
GRACE = 2.0


def sandbox_form(**changes) -> dict:
    """Return the sandbox form as a browser posts it for a new Docker sandbox, with changes."""
    data = {
        "name": "scratch", "memory_mb": 256, "cpus": 1, "pids_limit": 128, "timeout_seconds": 30,
        "max_output_bytes": 1_000_000, "base_image": "jazzmine/base:bookworm", "backend": "docker",
        "bash_max_commands": 100, "bash_max_loop_iterations": 100, "bash_timeout_seconds": 30,
    }  # fmt: skip
    return {**data, **changes}


def allow_tools(sandbox, *names: str) -> None:
    """Mark tools always-allowed, as asked for and accepted by an admin for their current code."""
    rows = Tool.objects.filter(sandbox=sandbox, name__in=names)
    rows.update(always_allow=True)
    code_accepted_mark(rows)


def code_accepted_mark(rows) -> None:
    """Mark the tools' current code accepted, as an admin's Accept does (fixtures, no audit)."""
    for row in rows:
        type(row).objects.filter(pk=row.pk).update(
            always_allow_accepted_checksum=row.checksum, accepted_code_digest=row.code_digest
        )


def migrate(*targets: tuple[str, str]):
    """Migrate the test database to `targets` (none: the latest); return the models there.

    For tests of what a data migration does to rows of before: the test's database must be
    transactional (`django_db(transaction=True)`), and migrate back to the latest at its end.
    """
    executor = MigrationExecutor(connection)
    nodes = list(targets) or executor.loader.graph.leaf_nodes()
    executor.migrate(nodes)
    executor.loader.build_graph()
    return executor.loader.project_state(nodes).apps


def page_form(client: Client, page: str, action: str) -> tuple[str, dict[str, list[str]]]:
    """Return the form a page holds that posts to `action`: the action and its hidden fields.

    What the browser would post for a person pressing its button (an Accept form carries the
    digest of what the page showed, which the server binds the decision to).
    """
    text = client.get(page).content.decode()
    form = re.search(r'<form[^>]*action="' + re.escape(action) + r'"[^>]*>(.*?)</form>', text)
    assert form is not None, f"no form posting to {action} on {page}"
    fields: dict[str, list[str]] = {}
    for name, value in re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form[1]):
        fields.setdefault(name, []).append(value)
    return action, fields


def rival_team(mark: str) -> tuple[Any, Any, Any, Any]:
    """Another team for the sweeps: (team, its admin rex, its demo sandbox, rex's API token).

    The token is named `mark`, the text a sweep looks for in every answer to an outsider.
    """
    from jazzmine_web.catalog.importer import source_file_from_path
    from jazzmine_web.catalog.services import tools_import
    from jazzmine_web.teams.models import ApiToken, Role
    from jazzmine_web.teams.services import api_token_create, team_create

    team = team_create(name="Rival", slug="rival")
    rex = teammate(team, Role.ADMIN, username="rex")
    tools_import(team=team, files=[source_file_from_path(DEMO)], author=rex)
    sandbox = team.sandboxes.get(name="ecommerce")
    accept_code(sandbox)
    api_token_create(user=rex, name=mark)
    return team, rex, sandbox, ApiToken.objects.get(user=rex)


def manage_check(**env: str) -> subprocess.CompletedProcess[str]:
    """Run `manage.py check` in a process of its own with `env` set: how a start reads settings."""
    # Only what the case sets: a test session on PostgreSQL has its own database and keys.
    ambient = {
        k: v for k, v in os.environ.items()
        if k not in ("JAZZMINE_DATABASE_URL", "JAZZMINE_SECRET_KEY", "JAZZMINE_SECRETS_KEY")
    }  # fmt: skip
    return subprocess.run(
        [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "check"],
        cwd=settings.BASE_DIR, env={**ambient, **env}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def run_printed(sandbox, user, events: list[tuple[str, Any]], *, language: str = "python",
                body: str = "emit_result(1)\n"):  # fmt: skip
    """Return a run (never queued) that stored `events` ((type, data), numbered from 1) as a
    sandbox would have sent them."""
    run = run_create(sandbox=sandbox, user=user, body=body, language=language, start=False)
    for seq, (kind, data) in enumerate(events, start=1):
        event = {"seq": seq, "type": kind, "data": data, "ts": time.time()}
        run_record_event(run_id=run.pk, event=event)
    return run


def run_in_worker(sandbox: Any, user: Any, monkeypatch: Any, body: str = "emit_result(1)\n"):
    """Run a script through the real worker (a missing image it makes itself, with no build
    row); return the run, done, and the secrets its process was handed."""
    from jazzmine.sandbox import docker_runner
    from jazzmine.sandbox.session import drive
    from jazzmine_web.runs.executor import RunExecutor
    from jazzmine_web.runs.models import RunStatus

    seen: dict[str, str] = {}

    def recording(process, request, limits):  # what is written to the sandbox's harness
        seen.update(request.secrets)
        return drive(process, request, limits)

    monkeypatch.setattr(docker_runner, "drive", recording)
    executor = RunExecutor(pool_size=0)
    try:
        executor.learn_images()
        run = run_create(sandbox=sandbox, user=user, body=body, start=False)
        assert executor.submit(run.pk, worker="w1@test").result(timeout=300) == RunStatus.SUCCEEDED
    finally:
        executor.shutdown()
    run.refresh_from_db()
    return run, seen
