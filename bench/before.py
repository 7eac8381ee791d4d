"""Run → first event: the task engine beside the single process it replaced, in one run.

Run: .venv/bin/python bench/before.py [runs] [REV]   (Redis and Docker must answer)

REV (default: the last commit before the task engine) is checked out from git into a
temporary directory and started the way it ran then: one daphne that executes runs on a thread
of its own, with its warm pool, on SQLite and the in-memory channel layer. Beside it, this
checkout's embedded deployment (daphne, a worker with a warm pool, Redis, SQLite). Both get a
fresh database with the demo data; one Chromium logs in to both and alternates their runs, so
whatever else this shared machine does weighs on both alike.

The issue that moved runs into workers measured the single process at 34 ms p50 (Run → first
event) on a quieter day; this puts today's figure for both next to each other. Per
deployment, p50/p95 in milliseconds:

- Run → first event in the browser: the playground's run message to the run's first event on
  its socket (the same message a person's Run button sends);
- Run → run_created: the web process's answer to the run message;
- sandbox emit → browser, first event: the event's timestamp taken in the sandbox to its
  arrival in the page (the way back: store, channel layer, socket);
- run stored → first event emitted: the run row's `created_at` to the first event's sandbox
  timestamp (the way there: hand-over, claim, preparation, sandbox; read from the database);
- the CPU its own processes spent per run (web; web and worker).

The ratio is the task engine's median over the single process's. Not a test.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import browser_launch, compare_rows, cpu_seconds, playground_page  # noqa: E402
from bench.team import QUICK, SOCKET_JS, START_JS, deployed, first_event_ms  # noqa: E402
from tests.workers import Web, free_port  # noqa: E402

# The last commit whose daphne executed runs itself (the next one moved them to Celery).
BEFORE = "0cb9bc2"

# The single process streamed a run's events as JSON on the playground's socket.
BEFORE_JS = """
async ([sandbox, body]) => {
  /* SOCKET */
  const t0 = performance.now();
  return await new Promise((resolve, reject) => {
    let runId = null, createdMs = null;
    pg.onmessage = (e) => {
      const m = JSON.parse(e.data);
      if (m.type === "error" || m.type === "run_refused") reject(new Error(e.data));
      if (m.type === "run_created") { runId = m.run_id; createdMs = performance.now() - t0; }
      if (runId && m.run_id === runId && m.type === "event") {
        pg.onmessage = null;
        resolve({run_id: runId, first_ms: performance.now() - t0, created_ms: createdMs,
                 emit_ms: Date.now() - m.event.ts * 1000});
      }
    };
    pg.send(JSON.stringify({type: "run", sandbox, task: "bench", body}));
  });
}
""".replace("/* SOCKET */", SOCKET_JS)

FIGURES = (
    ("Run → first event in the browser", "first_ms"),
    ("Run → run_created", "created_ms"),
    ("sandbox emit → browser, first event", "emit_ms"),
    ("run stored → first event emitted", "stored_ms"),
)


class Side:
    """One deployment under measurement: its page, its script, its processes."""

    def __init__(self, name: str, url: str, db: Path, pids: list[int], start_js: str) -> None:
        self.name, self.url, self.db, self.pids, self.start_js = name, url, db, pids, start_js
        self.page: Any = None
        self.sandbox = 0
        self.figures: dict[str, list[float]] = {key: [] for _label, key in FIGURES}
        self.cpu_per_run = 0.0

    def open(self, browser: Any) -> None:
        self.page = playground_page(browser, self.url)
        self.sandbox = int(self.page.get_attribute("#playground", "data-sandbox"))
        self.page.evaluate(self.start_js, [self.sandbox, QUICK])  # builds the image, fills the pool

    def measure(self) -> None:
        started = self.page.evaluate(self.start_js, [self.sandbox, QUICK])
        started["stored_ms"] = first_event_ms(self.db, started["run_id"], "created_at")
        for _label, key in FIGURES:
            self.figures[key].append(started[key])

    def cpu(self) -> float:
        return sum(cpu_seconds(pid) for pid in self.pids)


@contextlib.contextmanager
def single_process(rev: str, tmp: Path) -> Any:
    """Start `rev` from git as it ran then: one daphne on a fresh database with the demo data."""
    src = tmp / "src"
    src.mkdir()
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(src, filter="data")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "jazzmine_web.settings",
        "JAZZMINE_VAR_DIR": str(tmp / "var"),
        "JAZZMINE_DATABASE_PATH": str(tmp / "before.sqlite3"),
        "JAZZMINE_DEBUG": "false",
        "PYTHONPATH": str(src),
    }
    for command in (["migrate", "--no-input"], ["seed_demo"]):
        subprocess.run(
            [sys.executable, "manage.py", *command],
            cwd=src, env=env, check=True, capture_output=True, timeout=600,
        )  # fmt: skip
    web = Web(f"http://127.0.0.1:{free_port()}", env, tmp / "before-web.log", cwd=src)
    web.start()
    try:
        yield web
    finally:
        web.stop()


def main() -> None:
    from playwright.sync_api import sync_playwright

    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    rev = sys.argv[2] if len(sys.argv) > 2 else BEFORE
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="jazzmine-before-")))
        (tmp / "engine").mkdir()
        before = stack.enter_context(single_process(rev, tmp))
        engine = stack.enter_context(deployed("embedded", tmp / "engine"))
        assert before.process is not None and engine.web_a.process is not None
        sides = [
            Side(
                f"single process ({rev})",
                before.url,
                tmp / "before.sqlite3",
                [before.process.pid],
                BEFORE_JS,
            ),
            Side(
                "task engine (this checkout)",
                engine.web_a.url,
                tmp / "engine" / "bench.sqlite3",
                [engine.web_a.process.pid, *(w.process.pid for w in engine.workers)],
                START_JS,
            ),
        ]
        with sync_playwright() as playwright:
            browser = browser_launch(playwright)
            for side in sides:
                side.open(browser)
            spent = [side.cpu() for side in sides]
            for i in range(runs):
                for side in sides if i % 2 == 0 else sides[::-1]:
                    time.sleep(1.0)  # let the pool refill, as between two runs of a person
                    side.measure()
            for side, start in zip(sides, spent, strict=True):
                side.cpu_per_run = (side.cpu() - start) * 1000 / runs
            browser.close()
    single, engine_side = sides
    print(f"\n(ms, {runs} interleaved runs each)")
    print(f"{'':<38} {single.name:>28}   {engine_side.name:>28}   ratio")
    print("\n".join(compare_rows(FIGURES, [s.figures for s in sides], width=38, cell=28)))
    cpu = [s.cpu_per_run for s in sides]
    print(
        f"{'CPU per run, own processes (1 s pauses in)':<38} {cpu[0]:>28.1f}   {cpu[1]:>28.1f}"
        f"   {cpu[1] / cpu[0]:5.2f}x"
    )


if __name__ == "__main__":
    main()
