"""The web process, started as the Procfile starts it, refuses a body over the limit unread.

daphne alone reads and spools a whole body (to a temporary file past 100 KB) before the ASGI
app can refuse it; `jazzmine_web.studio.server` refuses it where the socket is read. These
tests talk raw HTTP over a socket, so that they see when the server answers relative to what
the client has sent, and watch the server's temporary files for what it stored.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
from django.conf import settings

from tests.waiting import wait_until
from tests.workers import ROOT, database_url_of, free_port, worker_env

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 4096
BIG = 32 * 1024 * 1024
CHUNK = 1024
BATCH = 64
PASSWORD = "correct horse battery"


@dataclass
class Server:
    port: int
    pid: int
    tmp: Path  # the server's TMPDIR: where Twisted spools a body it reads
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:]


def _procfile_web_line() -> str:
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.startswith("web:"):
            # The server's own command, without what starts it again when it ends.
            return line.removeprefix("web:").strip().removeprefix("bash scripts/keep-running.sh ")
    raise AssertionError("the Procfile has no web process")


@pytest.fixture(scope="module")
def server(django_db_setup, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Run the Procfile's web line (as honcho does, through a shell) on the test database."""
    port = free_port()
    tmp = tmp_path_factory.mktemp("web-tmp")
    log_path = tmp_path_factory.mktemp("web-log") / "web.log"
    env = worker_env(
        database_url=database_url_of(settings.DATABASES["default"]),
        extra={
            "JAZZMINE_HOST": "127.0.0.1",
            "JAZZMINE_PORT": str(port),
            "JAZZMINE_MAX_UPLOAD_BYTES": str(LIMIT),
            "TMPDIR": str(tmp),
        },
    )
    with log_path.open("wb") as log:
        # `exec`: the pid is the server's own, whose files the tests read and which they stop.
        process = subprocess.Popen(
            ["/bin/sh", "-c", f"exec {_procfile_web_line()}"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    running = Server(port=port, pid=process.pid, tmp=tmp, log_path=log_path)

    def answers() -> bool:
        assert process.poll() is None, running.log()
        with contextlib.suppress(httpx.HTTPError):
            return httpx.get(f"{running.url}/login/", timeout=2).status_code == 200
        return False

    try:
        wait_until(answers, timeout=60, message="the web process did not answer")
        yield running
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


class SpoolWatch:
    """The most the server held in temporary files at once, sampled while a block runs."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.most = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> SpoolWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(timeout=5)

    def _watch(self) -> None:
        fds = Path("/proc") / str(self.server.pid) / "fd"
        while not self._done.wait(0.005):
            held = 0
            for fd in list(fds.iterdir()):
                with contextlib.suppress(OSError):
                    if os.readlink(fd).startswith(str(self.server.tmp)):
                        held += os.stat(fd).st_size
            self.most = max(self.most, held)


def _head(port: int, framing: bytes, extra: bytes = b"") -> bytes:
    return (
        b"POST /api/v1/submissions/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
        b"Content-Type: application/json\r\n%s%s\r\n" % (port, framing, extra)
    )


def _read_answer(sock: socket.socket) -> bytes:
    """Read until the server closes the connection (a refusal always closes it)."""
    answer = b""
    with contextlib.suppress(ConnectionResetError):
        while data := sock.recv(65536):
            answer += data
    return answer


@pytest.mark.parametrize(
    "expect", [b"", b"Expect: 100-continue\r\n"], ids=["plain", "100-continue"]
)
def test_a_declared_length_over_the_limit_is_answered_before_the_body_is_sent(
    server: Server, expect: bytes
) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(_head(server.port, b"Content-Length: %d\r\n" % BIG, expect))
        try:
            answer = _read_answer(sock)  # headers only: the body is never sent
        except TimeoutError:
            pytest.fail("no answer within 10 s: the server waits for the body it should refuse")
    status, _, rest = answer.partition(b"\r\n")
    # Never `100 Continue`: that would invite the body.
    assert status.startswith(b"HTTP/1.1 413 "), answer[:200]
    head, _, body = rest.partition(b"\r\n\r\n")
    assert b"connection: close" in head.lower()
    error = json.loads(body)["error"]  # the API's error shape, as the ASGI layer answers it
    assert error["code"] == "too_large" and str(LIMIT) in error["message"]


def test_a_chunked_body_past_the_limit_is_cut_off_without_being_read_or_stored(
    server: Server,
) -> None:
    # 1 KB chunks, 64 to a write: the server can store a few before it passes the limit.
    batch = b"".join(b"%x\r\n%s\r\n" % (CHUNK, b"x" * CHUNK) for _ in range(BATCH))
    sent = 0
    answer = b""
    with SpoolWatch(server) as spool:
        with socket.socket() as sock:
            # A fixed send buffer (no autotuning to 4 MB): what is sent is what the server
            # side took in, give or take 64 KB.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
            sock.settimeout(10)
            sock.connect(("127.0.0.1", server.port))
            sock.sendall(_head(server.port, b"Transfer-Encoding: chunked\r\n"))
            try:
                while sent < BIG:
                    sock.sendall(batch)
                    sent += CHUNK * BATCH
                    time.sleep(0.001)  # a client on a real network; lets the server answer
                sock.sendall(b"0\r\n\r\n")
            except OSError:
                pass  # cut off: what the test expects
            with contextlib.suppress(OSError):
                answer = _read_answer(sock)
    assert sent < BIG, "the server took the whole body"
    # Only what the socket buffers took in before the close (64-128 KB measured here); daphne
    # alone takes every byte.
    assert sent <= 1024 * 1024, f"{sent} bytes went in before the server cut the body off"
    assert spool.most <= LIMIT, f"the server stored {spool.most} bytes of a {LIMIT}-byte limit"
    if answer:  # the 413 may be lost to the reset of the body's unread rest
        assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]


@pytest.fixture
def person(settings, django_user_model):
    """A user whose password the server can check: its hasher, not the tests' cheap one."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    return django_user_model.objects.create_user(username="ada", password=PASSWORD)


def _csrf_token(client: httpx.Client) -> str:
    page = client.get("/login/")
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert match, page.text[:500]
    return match.group(1)


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_a_form_within_the_limit_still_goes_through(server: Server, person, framing: str) -> None:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        fields = {"csrfmiddlewaretoken": _csrf_token(client), "username": person.username}
        form = urlencode({**fields, "password": PASSWORD}).encode()
        # A generator has no length: httpx sends it chunked, in these two pieces.
        body = form if framing == "content-length" else iter([form[:20], form[20:]])
        response = client.post(
            "/login/", content=body, headers={"Content-Type": "application/x-www-form-urlencoded"}
        )
    # Logged in: the whole body reached Django.
    assert response.status_code == 302, response.text[:500]
    assert "sessionid" in response.cookies


def _websocket_connect(server: Server, path: str, cookie: str) -> tuple[bytes, bytes]:
    """Open a websocket by hand; return the handshake's answer and the first message."""
    key = base64.b64encode(os.urandom(16))
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(
            b"GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
            b"Origin: %s\r\nCookie: sessionid=%s\r\n\r\n"
            % (path.encode(), server.port, key, server.url.encode(), cookie.encode())
        )
        received = b""
        while b"\r\n\r\n" not in received:
            data = sock.recv(65536)
            assert data, received
            received += data
        head, _, rest = received.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            return head, b""
        while len(rest) < 2 or len(rest) < 2 + (rest[1] & 0x7F):
            rest += sock.recv(65536)
        length = rest[1] & 0x7F
        assert length < 126, rest[:4]  # the badge's count is short
        return head, rest[2 : 2 + length]


def test_a_websocket_still_connects(server: Server, person) -> None:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        token = _csrf_token(client)
        client.post(
            "/login/",
            data={"csrfmiddlewaretoken": token, "username": person.username, "password": PASSWORD},
        )
        cookie = client.cookies["sessionid"]
    head, message = _websocket_connect(server, "/ws/reviews/queue/?badge=1", cookie)
    assert head.startswith(b"HTTP/1.1 101"), head
    assert json.loads(message)["type"] == "count"


def _raw(server: Server, request: bytes) -> tuple[bytes, bytes]:
    """Send a raw request; return the answer's status line and body (it closes the socket)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(request)
        answer = _read_answer(sock)
    status, _, rest = answer.partition(b"\r\n")
    return status, rest.partition(b"\r\n\r\n")[2]


HEAD_LIMIT = 16384  # Twisted's, for one line and for the whole head


@pytest.mark.parametrize(
    ("extra", "expected", "says"),
    [
        (b"X-Big: %s\r\n" % (b"a" * (HEAD_LIMIT + 600)), b"431", b"A request header is longer"),
        (b"".join(b"X-%d: %s\r\n" % (i, b"b" * 1000) for i in range(20)), b"431",
         b"headers together are longer than 16384"),
        (b"".join(b"X-%d: c\r\n" % i for i in range(600)), b"431", b"more than 500 headers"),
    ],
    ids=["one-long-header", "headers-together", "too-many-headers"],
)  # fmt: skip
def test_a_head_past_the_servers_limits_gets_a_431_saying_which(
    server: Server, extra: bytes, expected: bytes, says: bytes
) -> None:
    request = b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s\r\n" % (server.port, extra)
    status, body = _raw(server, request)
    assert status.split(b" ")[1] == expected, (status, body)
    assert status.endswith(b"Request Header Fields Too Large") and says in body, body


def test_a_request_line_past_the_limit_gets_a_414(server: Server) -> None:
    query = b"q=" + b"x" * (HEAD_LIMIT * 5)
    request = b"GET /login/?%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (query, server.port)
    status, body = _raw(server, request)
    assert status.startswith(b"HTTP/1.1 414 "), (status, body)
    assert b"request line (method, path and query) is longer than 16384 bytes" in body


def test_a_head_within_the_limits_is_still_served(server: Server) -> None:
    extra = b"X-Big: %s\r\n" % (b"a" * 8000)
    request = b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n%s\r\n" % (
        server.port,
        extra,
    )
    status, _body = _raw(server, request)
    assert status.startswith(b"HTTP/1.1 200 "), status
    # and a request Twisted cannot parse still gets a 400, saying so
    status, body = _raw(server, b"NOT A REQUEST LINE\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 400 "), status
    assert b"could not be read as HTTP" in body, body


def test_every_status_the_app_answers_has_its_reason_phrase(server: Server, person) -> None:
    # Twisted writes the status line and names no 422, 429 or 431: a locked-out login went
    # out as "HTTP/1.1 429 Unknown Status".
    with httpx.Client(base_url=server.url, timeout=10) as client:
        for _ in range(20):
            fields = {"csrfmiddlewaretoken": _csrf_token(client), "username": person.username}
            response = client.post("/login/", data={**fields, "password": "wrong-password"})
            if response.status_code == 429:
                break
    assert response.status_code == 429, response.status_code
    assert response.reason_phrase == "Too Many Requests"
