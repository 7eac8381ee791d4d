"""Measure the task engine across processes, beside the embedded default, in one run.

Run: .venv/bin/python bench/team.py  (Redis, PostgreSQL and Docker must answer, as
scripts/test.sh makes sure)

Two deployments are started one after the other, each on a fresh database with the demo data:

- embedded: SQLite, one daphne and one worker (what scripts/run.sh starts);
- team: PostgreSQL, web A and web B, one worker (README, "Run it for a team").

Chromium (playwright) logs in to web A and web B (the same daphne in the embedded one). Page A
starts runs from the playground's socket, as a person does; page B watches them on the run's
own socket. Figures, p50/p95 in milliseconds over loopback:

- Run → first event: from the run message on A to the run's first event on A's socket;
- enqueue → first event in the worker: the run row's `enqueued_at` to the sandbox timestamp
  of its first event (both clocks are this machine's);
- sandbox emit → watcher on B: an event's sandbox timestamp to its arrival in page B;
- a 1000-event burst watched on B: received, lost and out of order;
- runs per second: 16 runs submitted at once over the agents' API, each in a fresh container
  (from the warm pool, and with the pool off), until the last one ended.

The ratios compare the team deployment with the embedded one measured in this same run.
Not a test.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import datetime
import itertools
import os
import secrets
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    DEMO_ENV,
    DEMO_PASSWORD,
    browser_launch,
    deployment_images_clear,
    deployment_named,
    pct,
    playground_page,
)
from tests.workers import (  # noqa: E402
    AGENT_TOKEN_SCRIPT,
    Web,
    free_port,
    redis_namespace_clear,
    worker_start,
)

PG_ADMIN = "postgres://jazzmine:jazzmine@127.0.0.1:5432/jazzmine"
STARTS = 15  # runs measured for Run → first event
WATCHED = 8  # runs watched on B, 20 events each
SUBMITTED = 16  # runs submitted at once for runs per second

QUICK = "emit_intermediate('step', {'i': 0})\nemit_result({'done': True})\n"
# The watcher opens its socket once the run exists; the pause lets it join before the events.
PACED = (
    "time.sleep(0.5)\n"
    "for i in range(20):\n"
    "    emit_intermediate('step', {'i': i})\n"
    "    time.sleep(0.02)\n"
    "emit_result({'done': True})\n"
)
BURST = "time.sleep(0.5)\nfor i in range(1000):\n    emit_log(f'line {i}')\nemit_result(1000)\n"


# Events arrive as the run pane's HTML: each line carries its sequence number and sandbox time.
EVENTS_JS = """
const evs = (html) => [...html.matchAll(/data-seq="(\\d+)"><span class="since" data-ts="([^"]+)"/g)]
  .map((x) => ({seq: +x[1], ts: +x[2]}));
"""

# The page's playground socket, opened once and kept for the next runs.
SOCKET_JS = """
  const pg = window.benchSocket || await new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://${location.host}/ws/playground/`);
    ws.onopen = () => resolve(ws); ws.onerror = reject;
  });
  window.benchSocket = pg;
"""

# Page A: start one run on the playground socket; resolve at its first event.
START_JS = """
async ([sandbox, body]) => {
  /* EVENTS */
  /* SOCKET */
  const t0 = performance.now();
  return await new Promise((resolve, reject) => {
    let runId = null, createdMs = null, paneMs = null;
    pg.onmessage = (e) => {
      const m = JSON.parse(e.data);
      if (m.type === "error" || m.type === "run_refused") reject(new Error(e.data));
      if (m.type === "run_created") { runId = m.run_id; createdMs = performance.now() - t0; }
      if (runId && m.run_id === runId && m.type === "run_pane") paneMs = performance.now() - t0;
      if (runId && m.run_id === runId && m.type === "run_html" && evs(m.html).length) {
        pg.onmessage = null;
        resolve({run_id: runId, first_ms: performance.now() - t0, created_ms: createdMs,
                 pane_ms: paneMs, emit_ms: Date.now() - evs(m.html)[0].ts * 1000});
      }
    };
    pg.send(JSON.stringify({type: "run", sandbox, task: "bench", body}));
  });
}
""".replace("/* EVENTS */", EVENTS_JS).replace("/* SOCKET */", SOCKET_JS)

# Page A: start a run and return its id as soon as it exists (its events are B's to watch).
CREATE_JS = """
async ([sandbox, body]) => {
  const pg = window.benchSocket;
  return await new Promise((resolve, reject) => {
    pg.onmessage = (e) => {
      const m = JSON.parse(e.data);
      if (m.type === "error" || m.type === "run_refused") reject(new Error(e.data));
      if (m.type === "run_created") { pg.onmessage = null; resolve(m.run_id); }
    };
    pg.send(JSON.stringify({type: "run", sandbox, task: "bench", body}));
  });
}
"""

# Page B: watch one run on its own socket until it ends (the socket closes); every event that
# was emitted after the socket opened, with its delay, and every sequence number received.
WATCH_JS = """
async (runId) => await new Promise((resolve, reject) => {
  /* EVENTS */
  const ws = new WebSocket(`ws://${location.host}/ws/runs/${runId}/`);
  const seqs = [], delays = [];
  let opened = 0;
  ws.onopen = () => { opened = Date.now(); };
  ws.onerror = reject;
  ws.onmessage = (e) => {
    for (const ev of evs(e.data)) {
      seqs.push(ev.seq);
      if (ev.ts * 1000 > opened) delays.push(Date.now() - ev.ts * 1000);
    }
  };
  ws.onclose = () => resolve({seqs, delays});
})
""".replace("/* EVENTS */", EVENTS_JS)


@dataclass
class Deployment:
    """One started deployment: its processes, how to reach them, how to read its database."""

    label: str
    env: dict[str, str]
    web_a: Web
    web_b: Web
    read: Any  # fn(sql, params) -> rows
    token: str = ""
    workers: list[Any] = field(default_factory=list)

    def run_key(self, run_id: str) -> str:
        """Return a run id as this deployment's database stores it (SQLite: no dashes)."""
        return run_id if self.label == "team" else run_id.replace("-", "")

    def manage(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), *args],
            cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if result.returncode != 0:
            raise SystemExit(result.stdout + result.stderr)
        return result.stdout

    def worker(self, *, pool: int, tmp: Path) -> None:
        for worker in self.workers:
            worker.stop()
        self.workers = [
            worker_start(
                env={**self.env, "JAZZMINE_POOL_SIZE": str(pool)},
                name=f"bench-{self.label}-{pool}@{os.getpid()}",
                log_path=tmp / f"worker-{pool}.log",
                concurrency=2,
            )
        ]


@contextlib.contextmanager
def deployed(label: str, tmp: Path) -> Iterator[Deployment]:
    """Start one deployment on a fresh database with the demo data, and stop it afterwards."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "jazzmine_web.settings",
        "JAZZMINE_VAR_DIR": str(tmp),
        # Its own Redis namespace: a running deployment's worker must not take these runs.
        "JAZZMINE_REDIS_PREFIX": f"jazzmine-bench-{label}-{os.getpid()}",
        "JAZZMINE_DEBUG": "false",
        "PYTHONPATH": str(ROOT),
        **DEMO_ENV,
        **deployment_named(label),
    }
    database = f"jazzmine_bench_{os.getpid()}"
    if label == "team":
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}"')
            conn.execute(f'CREATE DATABASE "{database}"')
        url = f"postgres://jazzmine:jazzmine@127.0.0.1:5432/{database}"
        env |= {
            "JAZZMINE_DATABASE_URL": url,
            "JAZZMINE_SECRET_KEY": secrets.token_urlsafe(32),
            "JAZZMINE_SECRETS_KEY": secrets.token_urlsafe(32),
        }

        def read(sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
            with psycopg.connect(url) as conn:
                return conn.execute(sql.replace("?", "%s"), params).fetchall()
    else:
        path = tmp / "bench.sqlite3"
        env["JAZZMINE_DATABASE_PATH"] = str(path)

        def read(sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
            with contextlib.closing(sqlite3.connect(path)) as conn:
                return conn.execute(sql, params).fetchall()

    web_a = Web(f"http://127.0.0.1:{free_port()}", env, tmp / "web-a.log")
    web_b = web_a if label == "embedded" else Web(
        f"http://127.0.0.1:{free_port()}", env, tmp / "web-b.log"
    )  # fmt: skip
    deployment = Deployment(label, env, web_a, web_b, read)
    deployment.manage("migrate", "--no-input")
    deployment.manage("seed_demo")
    deployment.token = deployment.manage("shell", "-c", AGENT_TOKEN_SCRIPT).strip().splitlines()[-1]
    try:
        deployment.worker(pool=2, tmp=tmp)
        for web in {id(web_a): web_a, id(web_b): web_b}.values():
            web.start()
        yield deployment
    finally:
        for web in (web_a, web_b):
            with contextlib.suppress(Exception):
                web.stop()
        for worker in deployment.workers:
            with contextlib.suppress(Exception):
                worker.stop()
        if label == "team":
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        deployment_images_clear(env)
        redis_namespace_clear(
            env.get("JAZZMINE_REDIS_URL", "redis://127.0.0.1:6379/0"), env["JAZZMINE_REDIS_PREFIX"]
        )


def epoch(value: Any) -> float:
    if isinstance(value, datetime.datetime):
        return value.timestamp()
    return datetime.datetime.fromisoformat(str(value)).replace(tzinfo=datetime.UTC).timestamp()


def first_event_ms(db: Path, run_id: str, since: str) -> float:
    """Return ms from a run row's `since` column to its first event's sandbox time (SQLite).

    The page may show the event while it is being stored: this waits up to 5 s for its row.
    """
    key = run_id.replace("-", "")  # SQLite stores the uuid without dashes
    with contextlib.closing(sqlite3.connect(db)) as conn:
        ((start,),) = conn.execute(f"SELECT {since} FROM runs_run WHERE id = ?", (key,))
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT ts FROM runs_runevent WHERE run_id = ? ORDER BY seq LIMIT 1", (key,)
            ).fetchone()
            if row:
                return (row[0] - epoch(start)) * 1000
            time.sleep(0.01)
    raise SystemExit(f"run {run_id} stored no event in {db}")


def enqueue_to_first_event(deployment: Deployment, run_ids: list[str]) -> list[float]:
    """Return, per run, the worker's time from the run's enqueueing to its first event."""
    found = []
    for run_id in run_ids:
        key = deployment.run_key(run_id)
        (enqueued,) = deployment.read("SELECT enqueued_at FROM runs_run WHERE id = ?", (key,))[0]
        rows = deployment.read(
            "SELECT ts FROM runs_runevent WHERE run_id = ? ORDER BY seq LIMIT 1", (key,)
        )
        found.append((rows[0][0] - epoch(enqueued)) * 1000)
    return found


def runs_per_second(deployment: Deployment) -> float:
    """Submit runs at once over the API and return how many ended per second."""

    def one(client: httpx.Client) -> str:
        created = client.post(
            "/api/v1/submissions/",
            json={"sandbox": "demo/ecommerce", "task": "bench", "body": QUICK},
        ).json()
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            state = client.get(f"/api/v1/submissions/{created['id']}/wait/?timeout=20").json()
            if not state.get("timed_out"):
                return state["run"]["status"]
        return f"not finished in 300 s: {state}"

    headers = {"Authorization": f"Bearer {deployment.token}"}
    with (
        httpx.Client(base_url=deployment.web_a.url, headers=headers, timeout=180) as client,
        concurrent.futures.ThreadPoolExecutor(SUBMITTED) as pool,
    ):
        one(client)  # the pool of the sandbox fills on its first run
        time.sleep(2)
        started = time.monotonic()
        statuses = list(pool.map(lambda _i: one(client), range(SUBMITTED)))
        took = time.monotonic() - started
    if set(statuses) != {"succeeded"}:
        raise SystemExit(f"[{deployment.label}] runs did not all succeed: {statuses}")
    return SUBMITTED / took


def measure(browser: Any, label: str) -> dict[str, Any]:
    tmp = tempfile.mkdtemp(prefix=f"jazzmine-bench-{label}-")
    with deployed(label, Path(tmp)) as deployment:
        page_a = playground_page(browser, deployment.web_a.url, DEMO_PASSWORD)
        page_b = playground_page(browser, deployment.web_b.url, DEMO_PASSWORD)
        sandbox = int(page_a.get_attribute("#playground", "data-sandbox"))
        page_a.evaluate(START_JS, [sandbox, QUICK])  # builds the image, fills the pool
        starts, run_ids = [], []
        for _ in range(STARTS):
            time.sleep(1.0)  # let the pool refill, as between two runs of a person
            started = page_a.evaluate(START_JS, [sandbox, QUICK])
            starts.append(started["first_ms"])
            run_ids.append(started["run_id"])
        time.sleep(1.0)
        delays: list[float] = []
        for _ in range(WATCHED):
            run_id = page_a.evaluate(CREATE_JS, [sandbox, PACED])
            watched = page_b.evaluate(WATCH_JS, run_id)
            delays.extend(watched["delays"])
            time.sleep(0.5)
        run_id = page_a.evaluate(CREATE_JS, [sandbox, BURST])
        burst = page_b.evaluate(WATCH_JS, run_id)
        seqs = burst["seqs"]
        # The result is shown in its own region, not as a line: every other event is a line.
        rows = deployment.read(
            "SELECT seq, type FROM runs_runevent WHERE run_id = ?",
            (deployment.run_key(run_id),),
        )
        lines = {seq for seq, kind in rows if kind != "result"}
        # Order counts within the log: the exit's line goes to the timeline, another region,
        # which a batch renders before the log lines it carries.
        kinds = dict(rows)
        logged = [seq for seq in seqs if kinds.get(seq) == "log"]
        warm_rate = runs_per_second(deployment)
        deployment.worker(pool=0, tmp=Path(tmp))
        cold_rate = runs_per_second(deployment)
        figures = {
            "start": starts,
            "enqueue": enqueue_to_first_event(deployment, run_ids),
            "delivery": delays,
            "burst": {
                "stored": len(rows),
                "received": len(seqs),
                "lost": len(lines - set(seqs)),
                "reordered": sum(1 for a, b in itertools.pairwise(logged) if b <= a),
            },
            "warm_rate": warm_rate,
            "cold_rate": cold_rate,
        }
        page_a.context.close()
        page_b.context.close()
    shutil.rmtree(tmp)  # kept when something failed: the processes' logs are there
    print(f"[{label}] measured", flush=True)
    return figures


def main() -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = browser_launch(playwright)
        embedded = measure(browser, "embedded")
        team = measure(browser, "team")
        browser.close()

    def row(name: str, key: str) -> str:
        cells = []
        for figures in (embedded, team):
            values = figures[key]
            cells.append(f"p50 {pct(values, 0.5):7.1f}  p95 {pct(values, 0.95):7.1f}")
        ratio = statistics.median(team[key]) / statistics.median(embedded[key])
        return f"{name:<40} {cells[0]:>24}   {cells[1]:>24}   {ratio:5.2f}x"

    print()
    print(f"{'(ms)':<40} {'embedded (SQLite, 1 web)':>24}   {'team (PostgreSQL, A→B)':>24}   ratio")
    print(row("Run → first event in the browser", "start"))
    print(row("enqueue → first event in the worker", "enqueue"))
    print(row("sandbox emit → watcher (on B)", "delivery"))
    for label, figures in (("embedded", embedded), ("team", team)):
        burst = figures["burst"]
        print(
            f"1000-event burst ({label}): stored {burst['stored']}, lines received "
            f"{burst['received']} (all but the result), "
            f"lost {burst['lost']}, log lines out of order {burst['reordered']}"
        )
    for key, what in (("warm_rate", "warm pool"), ("cold_rate", "pool off")):
        e, t = embedded[key], team[key]
        print(
            f"runs per second, fresh container each ({what}): embedded {e:.2f}, team {t:.2f}"
            f" ({t / e:.2f}x)"
        )


if __name__ == "__main__":
    main()
