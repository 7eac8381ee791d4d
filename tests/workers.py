"""Real Celery workers (and daphnes) for tests, on the test session's database and Redis namespace.

Runs, builds and trials go through the broker to a separate process exactly as in production;
the test process only creates rows and watches them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]
START_SECONDS = 60


def venv_bin(name: str) -> str:
    """Return the path of one of the virtualenv's commands (daphne, celery)."""
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else str(ROOT / ".venv" / "bin" / name)


def web_command(cwd: Path = ROOT) -> list[str]:
    """Return the command that starts a checkout's web process (the Procfile's), before its options.

    daphne with the request size limit where the socket is read (`jazzmine_web.studio.server`);
    a checkout from before that launcher (bench/before.py starts one) ran daphne itself.
    """
    if (cwd / "jazzmine_web" / "studio" / "server.py").exists():
        return [venv_bin("python"), "-m", "jazzmine_web.studio.server"]
    return [venv_bin("daphne")]


def free_port() -> int:
    """Return a TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


_DEPLOYMENTS_STARTED = iter(range(1, 1 << 30))


def deployment_within_session(label: str) -> str:
    """Return a deployment name, under the test session's own, for processes a fixture starts.

    A fixture whose processes have a var dir of their own makes them a secret key of their
    own, hence a deployment of their own: the sandbox images they built were no deployment's
    the session removes, and stayed on the engine, four more every run of the suite. Named
    under the session's deployment, they go with its images when the session ends
    (`pytest_sessionfinish`); numbered, no two fixtures of one session share one.
    """
    from django.conf import settings

    return f"{settings.JAZZMINE_DEPLOYMENT}-{label}{next(_DEPLOYMENTS_STARTED)}"


def database_url_of(database: dict[str, Any]) -> str:
    """Return the URL of a Django database setting (the test database, once it is set up)."""
    engine = database["ENGINE"]
    if engine.endswith("sqlite3"):
        return f"sqlite:///{database['NAME']}"
    user, password = database.get("USER", ""), database.get("PASSWORD", "")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = database.get("HOST") or "127.0.0.1"
    port = database.get("PORT") or 5432
    return f"postgres://{auth}{host}:{port}/{database['NAME']}"


@dataclass
class WorkerProcess:
    """A running `celery worker` subprocess."""

    name: str
    log_path: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def log(self) -> str:
        """Return what the worker printed so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL the worker (it gets no chance to clean up), and its embedded beat.

        `--beat` forks beat as a child process that outlives the worker's SIGKILL and keeps
        scheduling for good (production runs beat as its own process). Only forked copies
        of the worker go: what the worker ran (pip, a bootstrap) must meet the kill as it
        would, which is what some tests watch.
        """
        assert self.process is not None
        forks = _forks_of(self.process.pid)
        self.process.kill()
        self.process.wait(timeout=10)
        for pid in forks:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def stop(self, timeout: float = 60) -> int:
        """SIGTERM the worker (a warm shutdown: it drains) and wait; return its exit code."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        return self.process.returncode


def _forks_of(pid: int) -> list[int]:
    """Return the children of a process that run its own command line (forks of it)."""
    proc = Path("/proc") / str(pid)
    try:
        command = (proc / "cmdline").read_bytes()
        children = [
            int(child)
            for task in (proc / "task").iterdir()
            for child in (task / "children").read_text().split()
        ]
    except OSError:
        return []
    forks = []
    for child in children:
        with contextlib.suppress(OSError):
            if (Path("/proc") / str(child) / "cmdline").read_bytes() == command:
                forks.append(child)
    return forks


def worker_start(
    *,
    env: dict[str, str],
    name: str,
    log_path: Path,
    concurrency: int = 4,
    beat: bool = False,
) -> WorkerProcess:
    """Start a worker and return once it answers a ping on the broker."""
    command = [
        venv_bin("celery"),
        "-A",
        "jazzmine_web",
        "worker",
        "--concurrency",
        str(concurrency),
        "--hostname",
        name,
        "--without-mingle",
        "--without-gossip",
        "--loglevel",
        "INFO",
        *(["--beat", "--schedule", str(log_path.with_suffix(".beat"))] if beat else []),
    ]
    worker = WorkerProcess(name=name, log_path=log_path)
    with log_path.open("wb") as log:
        worker.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    _wait_until_ready(worker)
    return worker


def _wait_until_ready(worker: WorkerProcess) -> None:
    def ready() -> bool:
        assert worker.process is not None
        if worker.process.poll() is not None:
            raise RuntimeError(f"celery exited with {worker.process.returncode}:\n{worker.log()}")
        return " ready." in worker.log()

    try:
        wait_until(
            ready, timeout=START_SECONDS, message=lambda: f"celery did not start:\n{worker.log()}"
        )
    except AssertionError:
        worker.stop(timeout=5)
        raise


def worker_env(*, database_url: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """Return the environment of a worker on a database (and this session's Redis namespace)."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "jazzmine_web.settings",
        "JAZZMINE_DATABASE_URL": database_url,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "PYTHONUNBUFFERED": "1",
        **(extra or {}),
    }


@contextlib.contextmanager
def worker_running(**kwargs: Any) -> Iterator[WorkerProcess]:
    """Run a worker until the block ends (then a warm shutdown)."""
    worker = worker_start(**kwargs)
    try:
        yield worker
    finally:
        worker.stop()


class SessionWorkers:
    """The test session's one worker, restarted only when a test needs other settings in it.

    A worker reads its settings from its environment, so a test that changes a setting the
    worker uses (a webhook backoff, the outbound allow-list) asks for a worker started with it.
    Only one runs at a time: two would share the session's queue and take each other's tasks.
    """

    def __init__(self, *, database_url: str, log_dir: Path, name: str) -> None:
        self.database_url = database_url
        self.log_dir = log_dir
        self.name = name
        self.current: WorkerProcess | None = None
        self._env: dict[str, str] | None = None
        self._started = 0

    def running(self, env: dict[str, str] | None = None, *, beat: bool = False) -> WorkerProcess:
        """Return a running worker with these extra environment variables (and beat in it)."""
        wanted = {**(env or {}), **({"_BEAT": "1"} if beat else {})}
        alive = self.current is not None and self.current.process.poll() is None
        if alive and self._env == wanted:
            return self.current
        self.stop()
        self._started += 1
        self.current = worker_start(
            env=worker_env(database_url=self.database_url, extra=wanted),
            name=self.name,
            log_path=self.log_dir / f"worker-{self._started}.log",
            beat=beat,
        )
        self._env = wanted
        return self.current

    def stop(self) -> None:
        """Stop the running worker, if any (a warm shutdown)."""
        if self.current is not None:
            self.current.stop()
            self.current = None


def runs_stop_unfinished(timeout: float = 10) -> None:
    """Cancel every unfinished run (as its author would) and wait until the worker let go."""
    from django.db import close_old_connections

    from jazzmine_web.runs.lifecycle import run_stop
    from jazzmine_web.runs.models import Run, RunStatus

    close_old_connections()
    unfinished = list(
        Run.objects.exclude(status__in=RunStatus.finished()).values_list("pk", flat=True)
    )
    for run_id in unfinished:
        run_stop(run_id=run_id, reason="cancelled: the test that started it has ended")
    still = Run.objects.filter(pk__in=unfinished).exclude(status__in=RunStatus.finished())
    # A run still preparing (building its image) may outlast the wait: it ends on its own.
    with contextlib.suppress(AssertionError):
        wait_until(lambda: not still.exists(), timeout=timeout, interval=0.05)


def worker_idle_wait(timeout: float = 10) -> None:
    """Wait until the session's worker executes no task (a run it ended may still be writing).

    A run reads as finished before its worker let go of it: its credentials are revoked and
    its end's receivers write after its status. Those writes must not meet the flush that
    follows the test (on PostgreSQL, its TRUNCATE and their foreign-key locks deadlock).
    """
    from jazzmine_web.celery import app

    def idle() -> bool:
        replies = app.control.inspect(timeout=1.0, limit=1).active() or {}
        return bool(replies) and all(not tasks for tasks in replies.values())

    with contextlib.suppress(AssertionError):
        wait_until(idle, timeout=timeout, interval=0.05)


class RunWaiter:
    """What a test waits on: a run's final status, read from the database."""

    def __init__(self, run_id: Any) -> None:
        self.run_id = run_id

    def result(self, timeout: float = 180) -> str:
        """Return the run's status once it has finished; fail after `timeout` seconds."""
        from django.db import close_old_connections

        from jazzmine_web.runs.models import Run, RunStatus

        def status() -> str:
            close_old_connections()
            return Run.objects.values_list("status", flat=True).get(pk=self.run_id)

        def final() -> str | None:
            found = status()
            return found if found in RunStatus.finished() else None

        return wait_until(
            final,
            timeout=timeout,
            interval=0.05,
            message=lambda: f"run {self.run_id} still {status()}",
        )


@dataclass
class Workers:
    """The test's handle on the session's worker: wait for runs, read its log."""

    process: WorkerProcess

    def future(self, run_id: Any) -> RunWaiter:
        """Return something to wait on for a run's final status."""
        return RunWaiter(run_id)

    def log(self) -> str:
        """Return what the worker printed so far."""
        return self.process.log()


@dataclass
class Web:
    """One web process (daphne, started as the checkout's Procfile starts it)."""

    url: str
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    cwd: Path = ROOT  # another checkout's daphne (bench/before.py starts an older one)

    def start(self) -> None:
        port = self.url.rsplit(":", 1)[1]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [*web_command(self.cwd), "-b", "127.0.0.1", "-p", port, "jazzmine_web.asgi:application"],
                cwd=self.cwd, env=self.env, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip

        def answers() -> bool:
            assert self.process is not None and self.process.poll() is None, (
                self.log_path.read_text()[-3000:]
            )
            with contextlib.suppress(httpx.HTTPError):
                return httpx.get(f"{self.url}/login/", timeout=2).status_code == 200
            return False

        wait_until(answers, timeout=60, message="daphne did not answer")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=30)


@contextlib.contextmanager
def web_on_test_database(log_dir: Path) -> Iterator[Web]:
    """Run one web process (as the Procfile starts it) on the test database; stop it after."""
    from django.conf import settings

    web = Web(
        f"http://127.0.0.1:{free_port()}",
        worker_env(database_url=database_url_of(settings.DATABASES["default"])),
        log_dir / "web.log",
    )
    web.start()
    try:
        yield web
    finally:
        web.stop()


# For `manage.py shell -c`: the demo team's agent (its token printed last), and no review on
# the demo sandbox, so that a submission runs at once.
AGENT_TOKEN_SCRIPT = """
from jazzmine_web.catalog.models import Sandbox
from jazzmine_web.reviews.models import SandboxReviewSettings
from jazzmine_web.teams.services import api_token_create
from django.contrib.auth import get_user_model
sandbox = Sandbox.objects.get(name="ecommerce")
SandboxReviewSettings.objects.update_or_create(sandbox=sandbox, defaults={"policy": "never"})
print(api_token_create(user=get_user_model().objects.get(username="demo"), name="topology").raw)
"""


def redis_namespace_clear(url: str, prefix: str) -> None:
    """Remove what a test session or a bench deployment left under its Redis prefix.

    kombu keeps its queue bindings there for good: three keys a session, one session after
    another on a developer's Redis.
    """
    import redis

    client = redis.Redis.from_url(url)
    with contextlib.closing(client):
        keys = list(client.scan_iter(match=f"{prefix}:*"))
        if keys:
            client.delete(*keys)
