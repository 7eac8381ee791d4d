"""A deployment as a team runs it: PostgreSQL, Redis, two web processes, two workers on two
Docker engines, and beat, each a real process started here.

The second engine runs beside the machine's own (its own socket and data root, no bridge);
the base image is copied into it, and its worker builds sandbox images there itself.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.topology import DEMO_ENV
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
PG_ADMIN = "postgres://jazzmine:jazzmine@127.0.0.1:5432/jazzmine"
BASE_IMAGE = os.environ.get("JAZZMINE_BASE_IMAGE", "jazzmine/base:bookworm")
HEARTBEAT_TIMEOUT = 6.0  # short, so a killed worker is noticed within the test's patience


@dataclass
class Engine:
    """A second Docker engine: its socket and its daemon process."""

    root: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def host(self) -> str:
        return f"unix://{self.root}/docker.sock"

    def docker(self, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "DOCKER_HOST": self.host}
        return subprocess.run(["docker", *args], env=env, capture_output=True, text=True, **kwargs)


@contextlib.contextmanager
def second_engine(root: Path) -> Iterator[Engine]:
    """Start a dockerd of our own, on a bridge of its own, and copy the base image into it.

    Not `--bridge=none`: a daemon started so removes the machine's `docker0`, which the
    first engine's containers need.
    """
    engine = Engine(root)
    (root / "data").mkdir(parents=True)
    had_docker0 = Path("/sys/class/net/docker0").exists()
    bridge = f"jzbr{os.getpid() % 100000}"
    subprocess.run(["ip", "link", "add", bridge, "type", "bridge"], check=True)
    subprocess.run(["ip", "addr", "add", "172.31.254.1/24", "dev", bridge], check=True)
    subprocess.run(["ip", "link", "set", bridge, "up"], check=True)
    log = (root / "dockerd.log").open("wb")
    engine.process = subprocess.Popen(
        ["dockerd", "--data-root", str(root / "data"), "--exec-root", str(root / "exec"),
         "-H", engine.host, "--pidfile", str(root / "docker.pid"),
         f"--bridge={bridge}", "--iptables=false", "--ip-masq=false"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while engine.docker("info").returncode != 0:
            assert time.monotonic() < deadline, (root / "dockerd.log").read_text()[-2000:]
            time.sleep(0.5)
        save = subprocess.Popen(["docker", "save", BASE_IMAGE], stdout=subprocess.PIPE)
        loaded = engine.docker("load", stdin=save.stdout)
        save.wait()
        assert loaded.returncode == 0, loaded.stderr
        yield engine
    finally:
        for container in engine.docker("ps", "-aq").stdout.split():
            engine.docker("rm", "-f", container)
        engine.process.terminate()
        try:
            engine.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            engine.process.kill()
        subprocess.run(["ip", "link", "delete", bridge], check=False)
        shutil.rmtree(root, ignore_errors=True)
    # The machine's own engine must be as it was: its containers need docker0.
    assert Path("/sys/class/net/docker0").exists() or not had_docker0, "docker0 was removed"


@dataclass
class Deployment:
    """Everything a test needs to drive the deployment and read what it did."""

    env: dict[str, str]
    database_url: str
    web_a: Web
    web_b: Web
    workers: dict[str, WorkerProcess]
    worker_env: dict[str, dict[str, str]]
    engines: dict[str, str]  # worker name -> DOCKER_HOST ("" for the machine's own)
    token: str
    log_dir: Path
    beat: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def api(self, web: Web) -> httpx.Client:
        """Return an agent's HTTP client on one web process."""
        return httpx.Client(
            base_url=web.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=60
        )

    def sql(self, query: str, *params: object) -> list[tuple]:
        """Read the deployment's database directly."""
        with psycopg.connect(self.database_url) as conn:
            return conn.execute(query, params).fetchall()

    def restart_worker(self, name: str) -> WorkerProcess:
        """Start a worker again under the same name (after it was killed)."""
        self.workers[name] = worker_start(
            env=self.worker_env[name],
            name=name,
            log_path=self.log_dir / f"{name.split('@')[0]}-again.log",
        )
        return self.workers[name]

    def manage(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), *args],
            cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """Start PostgreSQL-backed web A and B, worker 1 (this engine), worker 2 (its own), beat."""
    log_dir = tmp_path_factory.mktemp("topology")
    name = f"jazzmine_topology_{os.getpid()}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    database_url = f"postgres://jazzmine:jazzmine@127.0.0.1:5432/{name}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "jazzmine_web.settings",
        "JAZZMINE_DATABASE_URL": database_url,
        "JAZZMINE_SECRET_KEY": secrets.token_urlsafe(32),
        "JAZZMINE_SECRETS_KEY": secrets.token_urlsafe(32),
        "JAZZMINE_VAR_DIR": str(log_dir),
        "JAZZMINE_DEPLOYMENT": deployment_within_session("topology"),
        **DEMO_ENV,
        "JAZZMINE_REDIS_PREFIX": f"{os.environ['JAZZMINE_REDIS_PREFIX']}-topology",
        "JAZZMINE_DEBUG": "false",
        "JAZZMINE_HEARTBEAT_SECONDS": "1",
        "JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS": str(HEARTBEAT_TIMEOUT),
        "JAZZMINE_REAP_SECONDS": "1",
        "JAZZMINE_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
        "JAZZMINE_WEBHOOK_BACKOFF_SECONDS": "0.5",
        "JAZZMINE_WEBHOOK_MAX_ATTEMPTS": "4",
        "PYTHONPATH": str(ROOT),
        "PYTHONUNBUFFERED": "1",
    }
    web_a = Web(f"http://127.0.0.1:{free_port()}", env, log_dir / "web-a.log")
    web_b = Web(f"http://127.0.0.1:{free_port()}", env, log_dir / "web-b.log")
    deployment = Deployment(
        env=env, database_url=database_url, web_a=web_a, web_b=web_b, workers={},
        worker_env={}, engines={}, token="", log_dir=log_dir,
    )  # fmt: skip
    deployment.manage("migrate", "--no-input")
    deployment.manage("seed_demo")
    deployment.token = deployment.manage("shell", "-c", AGENT_TOKEN_SCRIPT).strip().splitlines()[-1]
    with second_engine(Path(f"/tmp/jazzmine-engine-{os.getpid()}")) as engine:
        try:
            for worker, host in (("one@topology", ""), ("two@topology", engine.host)):
                worker_env = {**env, **({"DOCKER_HOST": host} if host else {})}
                deployment.worker_env[worker] = worker_env
                deployment.engines[worker] = host
                deployment.workers[worker] = worker_start(
                    env=worker_env, name=worker, log_path=log_dir / f"{worker.split('@')[0]}.log",
                    concurrency=2,
                )  # fmt: skip
            beat_log = (log_dir / "beat.log").open("wb")
            deployment.beat = subprocess.Popen(
                [venv_bin("celery"), "-A", "jazzmine_web", "beat", "--schedule",
                 str(log_dir / "beat-schedule")],
                cwd=ROOT, env=env, stdout=beat_log, stderr=subprocess.STDOUT,
            )  # fmt: skip
            web_a.start()
            web_b.start()
            yield deployment
        finally:
            for web in (web_a, web_b):
                with contextlib.suppress(Exception):
                    web.stop()
            for worker in deployment.workers.values():
                with contextlib.suppress(Exception):
                    worker.stop()
            if deployment.beat is not None:
                deployment.beat.terminate()
                deployment.beat.wait(timeout=30)
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
