"""A deployment whose PostgreSQL and Redis are this test's own, to stop and start again.

The machine's PostgreSQL and Redis serve everyone's tests at once: an outage is made on
servers started here (a cluster of our own, a `redis-server` on a port of our own), started
as `scripts/ensure-postgres.sh` and `scripts/ensure-redis.sh` start theirs.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.topology import DEMO_ENV, DEMO_PASSWORD
from tests.waiting import wait_until
from tests.workers import (
    AGENT_TOKEN_SCRIPT,
    Web,
    WorkerProcess,
    deployment_within_session,
    free_port,
    venv_bin,
    worker_start,
)

ROOT = Path(__file__).resolve().parents[2]
PG_BIN = Path("/usr/lib/postgresql/15/bin")
HEARTBEAT_TIMEOUT = 6.0


def _as_postgres(*command: str) -> subprocess.CompletedProcess[str]:
    # initdb and postgres refuse to run as root.
    run_as = [] if os.geteuid() != 0 else ["runuser", "-u", "postgres", "--"]
    return subprocess.run([*run_as, *command], capture_output=True, text=True, check=True)


@dataclass
class Postgres:
    """A PostgreSQL cluster of this test's own, on loopback."""

    root: Path
    port: int = field(default_factory=free_port)

    @property
    def url(self) -> str:
        return f"postgres://jazzmine:jazzmine@127.0.0.1:{self.port}/jazzmine"

    def create(self) -> None:
        self.root.mkdir(parents=True)
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        data = str(self.root / "data")
        _as_postgres(str(PG_BIN / "initdb"), "-D", data, "-U", "postgres", "--auth=trust")
        self.start()
        psql = ["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-c"]
        _as_postgres(*psql, "CREATE ROLE jazzmine LOGIN SUPERUSER PASSWORD 'jazzmine'")
        _as_postgres(*psql, "CREATE DATABASE jazzmine OWNER jazzmine")

    def start(self) -> None:
        _as_postgres(
            str(PG_BIN / "pg_ctl"), "-D", str(self.root / "data"), "-l", str(self.root / "pg.log"),
            "-w", "-o", f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1", "start",
        )  # fmt: skip

    def stop(self) -> None:
        """Stop it as an operator's restart does (`-m fast`: every session is terminated)."""
        _as_postgres(
            str(PG_BIN / "pg_ctl"), "-D", str(self.root / "data"), "-m", "fast", "-w", "stop"
        )

    def remove(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass
class Redis:
    """A Redis of this test's own, started as `scripts/ensure-redis.sh` starts one."""

    root: Path
    port: int = field(default_factory=free_port)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _answers(self) -> bool:
        ping = subprocess.run(
            ["redis-cli", "-p", str(self.port), "ping"], capture_output=True, text=True
        )
        return ping.stdout.strip() == "PONG"

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--daemonize", "yes",
             "--dir", str(self.root), "--logfile", str(self.root / "redis.log"),
             "--pidfile", str(self.root / "redis.pid"), "--save", "", "--appendonly", "no"],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        wait_until(self._answers, timeout=10, interval=0.05, message="redis did not start")

    def stop(self) -> None:
        """Stop it as `redis-cli shutdown nosave` does: what it held is gone."""
        subprocess.run(
            ["redis-cli", "-p", str(self.port), "shutdown", "nosave"], capture_output=True
        )
        wait_until(lambda: not self._answers(), timeout=10, interval=0.05)


@dataclass
class Deployment:
    """web, one worker and beat on a database and a Redis of the test's own."""

    postgres: Postgres
    redis: Redis
    log_dir: Path
    env: dict[str, str] = field(default_factory=dict)
    web: Web | None = None
    worker: WorkerProcess | None = None
    beat: subprocess.Popen[bytes] | None = None
    token: str = ""

    def manage(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), *args],
            cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    def api(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.web.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=30
        )

    @contextlib.contextmanager
    def session(
        self, username: str = "demo", password: str = DEMO_PASSWORD
    ) -> Iterator[httpx.Client]:
        """Yield a client signed in as a person, sending the CSRF token with every POST."""
        with httpx.Client(base_url=self.web.url, timeout=30) as page:
            page.get("/login/")
            signed_in = page.post(
                "/login/",
                data={"username": username, "password": password,
                      "csrfmiddlewaretoken": page.cookies["csrftoken"]},
            )  # fmt: skip
            assert signed_in.status_code == 302, signed_in.text[:300]
            page.headers["X-CSRFToken"] = page.cookies["csrftoken"]
            yield page

    def stream(self, submission_id: str) -> Iterator[dict[str, Any]]:
        """Yield each line of a submission's NDJSON event stream, read as an agent reads it."""
        with (
            self.api() as api,
            api.stream("GET", f"/api/v1/submissions/{submission_id}/events/") as stream,
        ):
            for line in stream.iter_lines():
                yield json.loads(line)

    def sandbox_id(self, name: str) -> int:
        with self.api() as api:
            listed = api.get("/api/v1/sandboxes/").json()["sandboxes"]
        return next(s["id"] for s in listed if s["name"] == name)

    def submit(self, body: str, language: str = "python") -> httpx.Response:
        with self.api() as api:
            return api.post(
                "/api/v1/submissions/",
                json={
                    "sandbox": "demo/ecommerce",
                    "task": "outage",
                    "body": body,
                    "language": language,
                },
            )

    def state(self, submission_id: str) -> dict[str, Any]:
        with self.api() as api:
            response = api.get(f"/api/v1/submissions/{submission_id}/")
        assert response.status_code == 200, response.text[:500]
        return response.json()

    def final(self, submission_id: str, timeout: float = 60) -> dict[str, Any]:
        """Wait until the submission is final and return its run."""
        return wait_until(
            lambda: (state := self.state(submission_id))["final"] and state["run"],
            timeout=timeout,
            interval=0.2,
            message=lambda: f"still not final: {self.state(submission_id)}",
        )


@contextlib.contextmanager
def deployment_of_its_own(
    log_dir: Path, settings: dict[str, str] | None = None
) -> Iterator[Deployment]:
    """Start PostgreSQL, Redis, a web process, a worker and beat, all of this test's own.

    `settings`: environment variables that differ from this module's defaults.
    """
    postgres = Postgres(Path(f"/tmp/jazzmine-outage-pg-{os.getpid()}-{free_port()}"))
    redis = Redis(log_dir / "redis")
    deployment = Deployment(postgres=postgres, redis=redis, log_dir=log_dir)
    postgres.create()
    redis.start()
    deployment.env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "jazzmine_web.settings",
        "JAZZMINE_DATABASE_URL": postgres.url,
        "JAZZMINE_REDIS_URL": redis.url,
        "JAZZMINE_SECRET_KEY": "outage-test-secret-key-0123456789-0123456789",
        "JAZZMINE_SECRETS_KEY": "outage-test-secrets-key-0123456789-0123456789",
        "JAZZMINE_VAR_DIR": str(log_dir),
        "JAZZMINE_DEPLOYMENT": deployment_within_session("outage"),
        **DEMO_ENV,
        "JAZZMINE_DEBUG": "false",
        "JAZZMINE_HEARTBEAT_SECONDS": "1",
        "JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS": str(HEARTBEAT_TIMEOUT),
        "JAZZMINE_REAP_SECONDS": "1",
        "JAZZMINE_REQUEUE_AFTER_SECONDS": "3",
        "PYTHONPATH": str(ROOT),
        "PYTHONUNBUFFERED": "1",
        **(settings or {}),
    }
    try:
        deployment.manage("migrate", "--no-input")
        deployment.manage("seed_demo")
        deployment.token = deployment.manage("shell", "-c", AGENT_TOKEN_SCRIPT).splitlines()[-1]
        deployment.worker = worker_start(
            env=deployment.env, name="one@outage", log_path=log_dir / "worker.log", concurrency=2
        )
        deployment.beat = subprocess.Popen(
            [venv_bin("celery"), "-A", "jazzmine_web", "beat", "--schedule",
             str(log_dir / "beat-schedule")],
            cwd=ROOT, env=deployment.env, stdout=(log_dir / "beat.log").open("wb"),
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        deployment.web = Web(f"http://127.0.0.1:{free_port()}", deployment.env, log_dir / "web.log")
        deployment.web.start()
        yield deployment
    finally:
        with contextlib.suppress(Exception):
            deployment.web.stop()
        with contextlib.suppress(Exception):
            deployment.worker.stop(timeout=20)
        if deployment.beat is not None:
            deployment.beat.terminate()
            deployment.beat.wait(timeout=30)
        redis.stop()
        postgres.remove()


def ticking(seconds: int) -> str:
    """Return a script that logs twice a second for `seconds`, then emits its result."""
    return (
        f"for i in range({seconds * 2}):\n    emit_log(f'tick {{i}}')\n    time.sleep(0.5)\n"
        f"emit_result({seconds})\n"
    )
