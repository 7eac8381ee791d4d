"""Helpers of the tests that big scripts are read in the checker process, never in the web one.

`ast.parse` holds the GIL for its whole run: a big script parsed anywhere in the web process
(on its event loop or on a thread) shows as a stall of every other socket of that process. The
tests send one through a path while another socket pings the same process every 10 ms, and
bound the longest round trip far below the script's parse time. They also watch this test
process's children: the checker process is the one that works while a big script is read.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

from channels.db import database_sync_to_async
from django.test import Client

from jazzmine_web.asgi import application

LINE = "a{i} = [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4]\n"
END = "orders = get_orders(status='delivered')\nemit_result(len(orders.data['orders']) + len(a0))\n"
# The longest a ping may wait: below what one parse of any of these scripts holds the GIL
# (`parse_seconds`, asserted by the tests), and far below what reading one takes (a few parses).
PING_BOUND = 0.08


def big_script(chars: int) -> str:
    """Return a valid script of just under `chars` characters, slow to parse, calling get_orders.

    Many small nodes a character: about the slowest a valid script of its size parses.
    """
    text, size, i = [], len(END), 0
    while size + len(LINE.format(i=i)) < chars:
        text.append(LINE.format(i=i))
        size += len(text[-1])
        i += 1
    return "".join(text) + END


def one_line_script(chars: int) -> str:
    """Return a valid script of just under `chars` characters, slower still to parse, in a few
    words: a list of one name, over and over, on one line.

    An LLM's answer streams word by word (the fake LLM's pieces): one long line streams in a
    few pieces, so that what a test measures is the reading, not the stream.
    """
    end = (
        "]\norders=get_orders(status='delivered')\nemit_result(len(orders.data['orders'])+len(a))\n"
    )
    return "b=1\na=[" + "b," * ((chars - len(end) - 7) // 2) + end


PLAYGROUND = big_script(190_000)  # the playground takes up to 200 000 characters
ANSWER = one_line_script(190_000)  # an LLM's answer, of as many characters
API = one_line_script(99_000)  # the agents' API (and a reviewer's edit) up to 100 000


def parse_seconds(script: str) -> float:
    """Return how long one parse of a script holds the GIL here (the fastest of three)."""
    import ast

    times = []
    for _ in range(3):
        started = time.perf_counter()
        ast.parse(script)
        times.append(time.perf_counter() - started)
    return min(times)


class Pings:
    """Ping a socket of the web process every 10 ms; keep how late each answer came.

    Late from when the ping was due (10 ms after the last answer) to its answer: a stall while
    the pinger sleeps counts as well as one while it waits for an answer.
    """

    def __init__(self, ws) -> None:
        self.ws = ws
        self.trips: list[float] = []
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        due = time.perf_counter()
        while not self._stop.is_set():
            await self.ws.send_json_to({"type": "ping?"})
            reply = await self.ws.receive_json_from(timeout=30)
            assert reply["type"] == "error", reply  # an unknown message, answered at once
            answered = time.perf_counter()
            self.trips.append(answered - due)
            due = answered + 0.01
            await asyncio.sleep(0.01)

    @property
    def longest(self) -> float:
        return max(self.trips, default=0.0)


@contextlib.asynccontextmanager
async def pinging(ws) -> AsyncIterator[Pings]:
    """Ping `ws` while the block runs; the heap frozen (a full collection is no stall of ours)."""
    gc.collect()
    gc.freeze()
    pings = Pings(ws)
    pings._task = asyncio.get_running_loop().create_task(pings._run())
    try:
        await asyncio.sleep(0.05)
        yield pings
    finally:
        pings._stop.set()
        await pings._task
        gc.unfreeze()


def browser_headers(user) -> list[tuple[bytes, bytes]]:
    """Return the headers of a logged-in browser's form post: session, CSRF cookie and token."""
    client = Client()
    client.force_login(user)
    csrf = "c" * 32
    cookie = f"sessionid={client.cookies['sessionid'].value}; csrftoken={csrf}"
    return [(b"cookie", cookie.encode()), (b"x-csrftoken", csrf.encode())]


async def asgi_request(
    method: str, path: str, body: bytes, headers: list[tuple[bytes, bytes]]
) -> tuple[int, bytes]:
    """Send one HTTP request to the web process's own ASGI application; return status and body."""
    from asgiref.testing import ApplicationCommunicator

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"localhost"), *headers],
        "client": ("127.0.0.1", 40000),
        "server": ("localhost", 80),
    }
    request = ApplicationCommunicator(application, scope)
    await request.send_input({"type": "http.request", "body": body, "more_body": False})
    start = await request.receive_output(timeout=120)
    chunks = []
    while True:
        message = await request.receive_output(timeout=120)
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    # Let the application finish as a server does: its end of the request returns the
    # request's database connection to the pool (left to the garbage collector, it never did).
    await request.send_input({"type": "http.disconnect"})
    await request.wait(timeout=30)
    return start["status"], b"".join(chunks)


async def post_json(path: str, data: dict, token: str) -> tuple[int, bytes]:
    import json

    headers = [
        (b"content-type", b"application/json"),
        (b"authorization", f"Bearer {token}".encode()),
    ]
    return await asgi_request("POST", path, json.dumps(data).encode(), headers)


async def post_form(path: str, data: dict, user) -> tuple[int, bytes]:
    from urllib.parse import urlencode

    headers = await database_sync_to_async(browser_headers)(user)
    headers.append((b"content-type", b"application/x-www-form-urlencoded"))
    return await asgi_request("POST", path, urlencode(data).encode(), headers)


# The processes under this one: the checker process is one of them once it has started.


def _children() -> dict[int, int]:
    """Return {pid: parent pid} of every process on the machine."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return parents


def descendants(root: int | None = None) -> set[int]:
    """Return the pids of every process below `root` (this one by default)."""
    parents = _children()
    found, frontier = set(), {os.getpid() if root is None else root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def checker_processes() -> set[int]:
    """Return the pids of the checker's readers: the processes its forkserver forked.

    Only those: the suite's Celery worker (and whatever it runs) is under this process too,
    and a test that kills "the process reading the script" must never pick it.
    """
    parents = _children()
    forkserver = b"multiprocessing.forkserver"
    return {
        pid
        for pid in descendants()
        if forkserver in _cmdline(pid) and forkserver in _cmdline(parents.get(pid, 0))
    }


def cpu_ticks(pid: int) -> int:
    """Return the CPU time a process has used, in clock ticks (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])  # utime, stime


class ReaderWatch:
    """Tell which process under this one works while a script is read (and how much)."""

    def __init__(self) -> None:
        self.before = {pid: cpu_ticks(pid) for pid in checker_processes()}

    def busy(self) -> list[int]:
        """Return the checker's readers that used CPU since the watch began."""
        now = {pid: cpu_ticks(pid) for pid in checker_processes()}
        return [pid for pid, ticks in now.items() if ticks > self.before.get(pid, 0) + 2]


async def reader_busy(watch: ReaderWatch, *, timeout: float = 30) -> int:
    """Wait until a process under this one works (since `watch` began); return its pid."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = await asyncio.to_thread(watch.busy)
        if busy:
            return busy[0]
        await asyncio.sleep(0.005)
    raise AssertionError("no process under the web process read the script: it was read in it")
