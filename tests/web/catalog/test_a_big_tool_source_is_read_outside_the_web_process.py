"""A tool's big source is read in the checker process, never in the web process.

A tool's source was parsed where it arrived: by the form's check and the service's (a save),
by the importer (up to the upload's 2 MB of Python at once: 2.3 s), and by every registry of
its sandbox that a page or a run built. `ast.parse` holds the GIL for its whole run, so each
stalled every socket of the web process, anyone's. A tool's source is now at most 100,000
characters, and a big one is read in the checker process (as a big script is); a checker that
dies refuses the save or the import with a clear error, and nothing is stored.
"""

from __future__ import annotations

import asyncio
import os
import signal
import uuid

import pytest
from channels.db import database_sync_to_async

from jazzmine_web.catalog.models import Tool
from jazzmine_web.studio import checker
from tests.web.checker import (
    PING_BOUND,
    ReaderWatch,
    asgi_request,
    browser_headers,
    parse_seconds,
    pinging,
    post_form,
    reader_busy,
)
from tests.web.helpers import playground_socket

pytestmark = [pytest.mark.django_db(transaction=True)]

LIMIT = 100_000


def big_tool(name: str, chars: int = LIMIT - 1_000) -> str:
    """Return a tool's valid source of just under `chars` characters, slow to parse."""
    head = f"def {name}(x: int) -> int:\n    a = ["
    end = "]\n    return x + len(a)\n"
    return head + "b," * ((chars - len(head) - len(end)) // 2) + end


def _fields(name: str, source: str) -> dict[str, str]:
    return {"name": name, "description": f"Count {name}.", "source": source, "kind": "python"}


@database_sync_to_async
def _tools() -> list[tuple[str, str]]:
    return sorted(Tool.objects.values_list("name", "source"))


def test_the_sources_take_far_longer_to_read_than_a_ping_may() -> None:
    # Else the bounds below prove nothing: the source must be slow to read in one process.
    assert parse_seconds(big_tool("count_x")) > 1.5 * PING_BOUND


async def test_saving_and_showing_a_big_tool_leave_every_other_socket_answering(
    member, empty_sandbox
) -> None:
    source = big_tool("count_orders")
    other = await playground_socket(member)
    watch = ReaderWatch()
    try:
        async with pinging(other) as saved:
            status, page = await post_form(
                f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/",
                _fields("count_orders", source),
                member,
            )
        assert status == 302, page[:500]
        assert await _tools() == [("count_orders", source)]
        (pk,) = await database_sync_to_async(
            lambda: list(Tool.objects.values_list("pk", flat=True))
        )()
        # Its page shows the prompt of its sandbox's registry, built (and parsed) afresh.
        headers = await database_sync_to_async(browser_headers)(member)
        async with pinging(other) as shown:
            status, page = await asgi_request("GET", f"/catalog/tools/{pk}/", b"", headers)
        assert status == 200 and b"count_orders" in page, page[:500]
    finally:
        await other.disconnect()
    assert saved.longest < PING_BOUND, f"a ping waited {saved.longest:.3f} s for the save"
    assert shown.longest < PING_BOUND, f"a ping waited {shown.longest:.3f} s for the tool page"
    assert watch.busy(), "no process under the web process read the source: it was read in it"


async def test_a_source_over_the_limit_is_refused_saying_so(member, empty_sandbox) -> None:
    for chars in (LIMIT + 1, 2 * LIMIT, 1_500_000):
        source = "def count_x(x: int) -> int:\n    return x\n# " + "x" * (chars - 43)
        assert len(source) == chars
        status, page = await post_form(
            f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/", _fields("count_x", source), member
        )
        assert status == 422, page[:500]
        assert f"the source is {chars:,} characters" in page.decode()
        assert "at most 100,000" in page.decode()
    assert await _tools() == []
    # At the limit, it is taken.
    source = big_tool("count_x", LIMIT)
    status, page = await post_form(
        f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/", _fields("count_x", source), member
    )
    assert status == 302, page[:500]
    assert await _tools() == [("count_x", source)]


async def test_a_killed_checker_refuses_the_save_and_stores_nothing(member, empty_sandbox) -> None:
    small = "def count_y(x: int) -> int:\n    return x\n"
    status, _ = await post_form(
        f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/", _fields("count_y", small), member
    )
    assert status == 302
    before = await _tools()
    watch = ReaderWatch()
    # A source no other test read: a read made just before is not made again (the form's and
    # the service's checks share one).
    saving = asyncio.create_task(
        post_form(
            f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/",
            _fields("count_killed", big_tool("count_killed")),
            member,
        )
    )
    os.kill(await reader_busy(watch), signal.SIGKILL)
    status, page = await saving
    assert status == 422, page[:500]
    assert "The source could not be checked" in page.decode() and "killed" in page.decode()
    assert await _tools() == before
    # The next save gets a new checker process (the read that failed was not kept).
    status, page = await post_form(
        f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/",
        _fields("count_killed", big_tool("count_killed")),
        member,
    )
    assert status == 302, page[:500]


def _module(names: list[str]) -> bytes:
    """Return a module of big tools, one per name."""
    tools = "".join(f"\n@tool(description='Count {n}.')\n{big_tool(n, 95_000)}" for n in names)
    return ("from jazzmine.core.tools import tool\n" + tools).encode()


async def _import(member, team, files: dict[str, bytes]) -> tuple[int, str]:
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="team"\r\n\r\n{team.pk}\r\n'.encode(),
        f'--{boundary}\r\nContent-Disposition: form-data; name="sandbox"\r\n\r\nbulk\r\n'.encode(),
    ]
    for name, data in files.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{name}"\r\n'
            "Content-Type: text/x-python\r\n\r\n".encode()
            + data
            + b"\r\n"
        )
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    headers = await database_sync_to_async(browser_headers)(member)
    headers.append((b"content-type", f"multipart/form-data; boundary={boundary}".encode()))
    headers.append((b"content-length", str(len(body)).encode()))  # a multipart body needs it
    status, page = await asgi_request("POST", "/catalog/import/", body, headers)
    return status, page.decode()


async def test_an_import_of_big_files_leaves_every_other_socket_answering(member, team) -> None:
    files = {
        "orders.py": _module(["count_orders", "count_refunds", "count_returns"]),
        "users.py": _module(["count_users", "count_admins", "count_guests"]),
    }
    assert sum(len(data) for data in files.values()) > 500_000
    other = await playground_socket(member)
    watch = ReaderWatch()
    try:
        async with pinging(other) as pings:
            status, page = await _import(member, team, files)
    finally:
        await other.disconnect()
    assert status == 200, page[:500]
    assert [name for name, _ in await _tools()] == [
        "count_admins",
        "count_guests",
        "count_orders",
        "count_refunds",
        "count_returns",
        "count_users",
    ]
    assert pings.longest < PING_BOUND, f"a ping waited {pings.longest:.3f} s for the import"
    assert watch.busy(), "no process under the web process read the files: they were read in it"


async def test_a_big_import_refused_in_the_checker_names_each_problem(member, team) -> None:
    # The refusal comes back from the checker process whole: each problem, its file and line.
    files = {
        "orders.py": _module(["count_orders", "count_refunds"]),
        "more.py": _module(["count_orders"]),
    }
    status, page = await _import(member, team, files)
    assert status == 422, page[:500]
    line = files["more.py"].decode().split("\n").index("def count_orders(x: int) -> int:") + 1
    assert f"<code>more.py:{line}</code> duplicate tool name" in page
    assert await _tools() == []


async def test_a_killed_checker_refuses_the_import_and_stores_nothing(member, team) -> None:
    watch = ReaderWatch()
    importing = asyncio.create_task(
        _import(member, team, {"orders.py": _module(["count_orders", "count_refunds"])})
    )
    os.kill(await reader_busy(watch), signal.SIGKILL)
    status, page = await importing
    assert status == 422, page[:500]
    assert "could not be read" in page and "killed" in page
    assert await _tools() == []


async def test_a_page_whose_registry_the_checker_cannot_read_says_so(
    member, empty_sandbox, monkeypatch
) -> None:
    status, _ = await post_form(
        f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/",
        _fields("count_orders", big_tool("count_orders")),
        member,
    )
    assert status == 302
    (pk,) = await database_sync_to_async(lambda: list(Tool.objects.values_list("pk", flat=True)))()
    # Edited around the forms (an admin's raw update): a registry nobody has built yet.
    await database_sync_to_async(
        lambda: Tool.objects.filter(pk=pk).update(description="Count every order.")
    )()
    monkeypatch.setattr(checker, "CHECK_TIMEOUT_SECONDS", 0.01)
    headers = await database_sync_to_async(browser_headers)(member)
    status, page = await asgi_request("GET", f"/catalog/tools/{pk}/", b"", headers)
    assert status == 503, page[:500]
    assert b"could not be read: reading it took longer than 0.01 seconds" in page
    monkeypatch.undo()
    status, page = await asgi_request("GET", f"/catalog/tools/{pk}/", b"", headers)
    assert status == 200 and b"Count every order." in page
