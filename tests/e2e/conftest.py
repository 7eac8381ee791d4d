"""Shared end-to-end infrastructure: a real daphne serving a fresh database, and Chromium.

Fixtures for every e2e test:
- `studio_server` (session): migrated + seeded SQLite in a tmp dir, daphne on a free port;
  `.url`, `.env`, `.manage(...)` to run management commands against the same database.
- `browser` (session) and `page` (per test, its own context): Debian's Chromium, headless.
- `login(page, studio_server, username=..., password=...)`: the login helper.
- `fake_llm` (session): the README's local LLM stand-in, `python -m jazzmine.llm.fake_server`.
- `studio_server_with_llm` (session): like `studio_server`, configured for `fake_llm` the way
  the README says (`JAZZMINE_LLM_*`, `JAZZMINE_OUTBOUND_ALLOWED_HOSTS`).
- `browser_page(browser, server)`: a fresh context (another browser profile) on any server.
Mark e2e tests with `@pytest.mark.e2e`.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.workers import (
    WorkerProcess,
    deployment_within_session,
    free_port,
    web_command,
    worker_start,
)

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("JAZZMINE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DEMO_USER = "demo"
DEMO_PASSWORD = "jazzmine-demo"
SERVER_START_SECONDS = 60


@dataclass
class StudioServer:
    """A running daphne serving Jazzmine Studio on its own database."""

    url: str
    env: dict[str, str]
    var_dir: Path
    database: Path
    log_path: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    worker: WorkerProcess | None = field(default=None, repr=False)

    def manage(self, *args: str) -> str:
        """Run a management command against the server's database; return its output."""
        result = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if result.returncode != 0:
            raise AssertionError(
                f"manage.py {' '.join(args)} failed:\n{result.stdout}{result.stderr}"
            )
        return result.stdout

    def log(self) -> str:
        """Return what the server (and its worker) printed so far."""
        daphne = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        worker = self.worker.log() if self.worker is not None else ""
        return f"{daphne}\n--- worker ---\n{worker}" if worker else daphne

    @property
    def ws_url(self) -> str:
        """Return the server's base URL for websockets."""
        return self.url.replace("http://", "ws://", 1)


def _wait_until_answering(server: StudioServer) -> None:
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        assert server.process is not None
        if server.process.poll() is not None:
            raise RuntimeError(f"daphne exited with {server.process.returncode}:\n{server.log()}")
        try:
            with urllib.request.urlopen(f"{server.url}/login/", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"daphne did not answer within {SERVER_START_SECONDS}s:\n{server.log()}")


@pytest.fixture(scope="session")
def studio_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StudioServer]:
    """Start a real daphne on a fresh, migrated and seeded database; stop it at the end."""
    with serve(seeded_studio_server(tmp_path_factory)) as server:
        yield server


def seeded_studio_server(
    tmp_path_factory: pytest.TempPathFactory, extra_env: dict[str, str] | None = None
) -> StudioServer:
    """Describe a server on a fresh database, migrated and seeded as a newcomer gets it."""
    var_dir = tmp_path_factory.mktemp("studio-var")
    database = var_dir / "e2e.sqlite3"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "jazzmine_web.settings",
        "JAZZMINE_VAR_DIR": str(var_dir),
        "JAZZMINE_DEPLOYMENT": deployment_within_session("e2e"),
        "JAZZMINE_DATABASE_PATH": str(database),
        "JAZZMINE_DEBUG": "false",
        "JAZZMINE_SERVE_STATIC": "true",
        "JAZZMINE_DEMO_USER": DEMO_USER,
        "JAZZMINE_DEMO_PASSWORD": DEMO_PASSWORD,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "PYTHONUNBUFFERED": "1",
        **(extra_env or {}),
    }
    port = free_port()
    # Its own Redis namespace: another server's worker must never take this server's tasks.
    env["JAZZMINE_REDIS_PREFIX"] = f"{os.environ['JAZZMINE_REDIS_PREFIX']}-{port}"
    server = StudioServer(
        url=f"http://127.0.0.1:{port}",
        env=env,
        var_dir=var_dir,
        database=database,
        log_path=var_dir / "daphne.log",
    )
    server.manage("migrate", "--no-input")
    server.manage("seed_demo")
    return server


@contextlib.contextmanager
def serve(server: StudioServer) -> Iterator[StudioServer]:
    """Run daphne and a Celery worker (with beat) for a server until the block ends."""
    port = int(server.url.rsplit(":", 1)[1])
    worker = worker_start(
        env=server.env,
        name=f"e2e-{port}@%h",
        log_path=server.log_path.with_name(f"worker-{port}.log"),
        beat=True,
    )
    server.worker = worker
    with server.log_path.open("wb") as log:
        server.process = subprocess.Popen(
            [
                *web_command(),
                "-b",
                "127.0.0.1",
                "-p",
                str(port),
                "jazzmine_web.asgi:application",
            ],
            cwd=ROOT,
            env=server.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_until_answering(server)
        yield server
    finally:
        server.process.terminate()
        try:
            server.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(timeout=10)
        worker.stop()


# The pages run under a Content-Security-Policy without 'unsafe-eval' or inline code
# (jazzmine_web/settings.py), and the browser tests keep it on (see tests/e2e/waiting.py): any
# violation a page reports fails its test.
CSP_VIOLATIONS: list[str] = []
_WATCH_CSP = """document.addEventListener("securitypolicyviolation", (e) =>
  window.__cspViolation(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`));"""


def csp_watched(context: object) -> object:
    """Report the context's CSP violations into CSP_VIOLATIONS."""
    context.expose_binding(
        "__cspViolation", lambda src, text: CSP_VIOLATIONS.append(f"{src['page'].url}: {text}")
    )
    context.add_init_script(_WATCH_CSP)
    return context


@pytest.fixture(autouse=True)
def no_csp_violation() -> Iterator[None]:
    """Fail a browser test during which a page reported a CSP violation."""
    CSP_VIOLATIONS.clear()
    yield
    assert CSP_VIOLATIONS == [], "CSP violations:\n" + "\n".join(CSP_VIOLATIONS)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Launch Debian's Chromium once for the whole session (headless)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium (scripts/test.sh does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture
def page(browser, studio_server: StudioServer) -> Iterator[object]:
    """Open a fresh browser context (no cookies) and page, with the server as base URL."""
    context = csp_watched(browser.new_context(base_url=studio_server.url))
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()


def login(
    page: object,
    server: StudioServer,
    *,
    username: str = DEMO_USER,
    password: str = DEMO_PASSWORD,
) -> None:
    """Log in through the real login form and wait for the home page."""
    page.goto(f"{server.url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{server.url}/")


@pytest.fixture
def logged_in_page(page, studio_server: StudioServer) -> object:
    """Return a page logged in as the demo user (member, reviewer and admin of the demo team)."""
    login(page, studio_server)
    return page


@contextlib.contextmanager
def sized_page(browser, server: StudioServer, width: int, height: int) -> Iterator[object]:
    """Open a page of a window this size, in a context of its own, logged in as the demo user."""
    context = browser.new_context(base_url=server.url, viewport={"width": width, "height": height})
    context.set_default_timeout(15_000)
    page = context.new_page()
    login(page, server)
    try:
        yield page
    finally:
        context.close()


@contextlib.contextmanager
def browser_page(browser, server: StudioServer) -> Iterator[object]:
    """Open a page in a context of its own (another browser profile) with the server as base."""
    context = csp_watched(browser.new_context(base_url=server.url))
    context.set_default_timeout(15_000)
    try:
        yield context.new_page()
    finally:
        context.close()


@dataclass
class FakeLLM:
    """The README's local LLM stand-in, running as its own process on loopback."""

    host: str
    port: int
    process: subprocess.Popen[bytes] = field(repr=False)

    @property
    def base_url(self) -> str:
        """Return the OpenAI-compatible base URL to configure the app with."""
        return f"http://{self.host}:{self.port}/v1"

    def requests(self) -> list[dict[str, object]]:
        """Return the chat requests the stand-in received so far (what the app asked)."""
        url = f"http://{self.host}:{self.port}/_requests"
        with urllib.request.urlopen(url, timeout=5) as response:
            return json.loads(response.read())


@pytest.fixture(scope="session")
def fake_llm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeLLM]:
    """Start `python -m jazzmine.llm.fake_server` on a free loopback port, as the README does."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("fake-llm") / "fake_llm.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            # A small token delay keeps generation visibly streamed without slowing tests.
            [
                sys.executable,
                "-m",
                "jazzmine.llm.fake_server",
                *("--port", str(port), "--delay", "0.005"),
            ],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    llm = FakeLLM(host="127.0.0.1", port=port, process=process)
    try:
        deadline = time.monotonic() + SERVER_START_SECONDS
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"fake LLM exited:\n{log_path.read_text(errors='replace')}")
            try:
                with urllib.request.urlopen(f"{llm.base_url}/models", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield llm
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="session")
def studio_server_with_llm(
    tmp_path_factory: pytest.TempPathFactory, fake_llm: FakeLLM
) -> Iterator[StudioServer]:
    """Serve a fresh seeded studio configured for the local LLM stand-in as the README says."""
    env = {
        "JAZZMINE_OUTBOUND_ALLOWED_HOSTS": f"{fake_llm.host}:{fake_llm.port}",
        "JAZZMINE_LLM_BASE_URL": fake_llm.base_url,
        "JAZZMINE_LLM_MODEL": "jazzmine-fake",
    }
    with serve(seeded_studio_server(tmp_path_factory, env)) as server:
        yield server


# A second token of one name for one person is refused (reviewers tell agents apart by it):
# the one a test made before on this server is revoked, as a person would, first.
MAKE_AGENT = """
from django.contrib.auth import get_user_model
from jazzmine_web.teams.models import ApiToken, Team
from jazzmine_web.teams.services import api_token_create, api_token_revoke, membership_set
user, _ = get_user_model().objects.get_or_create(username=USERNAME)
membership_set(team=Team.objects.get(slug="demo"), user=user, role="member")
for old in ApiToken.objects.filter(user=user, name=TOKEN, revoked_at__isnull=True):
    api_token_revoke(user=user, token_id=old.pk)
print(api_token_create(user=user, name=TOKEN).raw)
"""


def agent_token(
    server: StudioServer, *, username: str = "agent-bot", token: str = "e2e-agent"
) -> str:
    """Make a member of the demo team (not the reviewer) with an API token; return the token."""
    code = MAKE_AGENT.replace("USERNAME", repr(username)).replace("TOKEN", repr(token))
    return server.manage("shell", "-c", code).strip().splitlines()[-1]
