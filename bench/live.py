"""Measure the live paths of the playground through a real daphne, as a browser sees them.

Run: .venv/bin/python bench/live.py

Starts daphne and a Celery worker twice on a fresh database with the demo data (once with the
warm pool, once with JAZZMINE_POOL_SIZE=0, a fresh container per run; Redis must answer, as
scripts/run.sh makes sure) and drives Debian's Chromium with playwright:

- keystroke → violations: one validate message on the playground socket until its answer;
- sandbox emit → browser: an event's timestamp (taken in the sandbox) to its arrival in the page;
- Run → first event in the browser: the run message until the run's first event arrives on
  the playground's socket, warm pool against cold start; and, beside it, the same through a
  second socket opened for the run (what a reloaded page does).

Figures are p50/p95 in milliseconds over loopback; the ratios compare the two servers measured in
this same run. Not a test.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    browser_launch,
    deployment_images_clear,
    deployment_named,
    pct,
    playground_page,
)
from tests.workers import free_port, web_command  # noqa: E402

KEYSTROKES = 200
RUNS = 15
SCRIPT = (
    "for i in range(5):\n"
    "    emit_intermediate('step', {'i': i})\n"
    "    time.sleep(0.02)\n"
    "emit_result({'done': True})\n"
)

# Runs inside the page: measures with performance.now() and the page's own clock.
PAGE_JS = """
async ([sandbox, keystrokes, runs, script]) => {
  const open = (path) => new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://${location.host}${path}`);
    ws.onopen = () => resolve(ws);
    ws.onerror = reject;
  });
  const next = (ws, accept) => new Promise((resolve) => {
    const handler = (e) => { const m = JSON.parse(e.data); if (accept(m)) { ws.removeEventListener("message", handler); resolve(m); } };
    ws.addEventListener("message", handler);
  });
  const pg = await open("/ws/playground/");
  const validate = [];
  let body = "orders = get_orders()\\n";
  for (let i = 0; i < keystrokes; i++) {
    body += (i % 40 === 39) ? "\\n" : "x";
    const t0 = performance.now();
    pg.send(JSON.stringify({type: "validate", version: i, sandbox, body: body + "\\nemit_result(1)"}));
    await next(pg, (m) => m.type === "validation" && m.version === i);
    validate.push(performance.now() - t0);
  }
  // Run → first event, two ways: on the playground's own socket (what the page does), and on
  // a run socket opened after the run exists (what a reloaded page or the run page does).
  const start = [], separate = [], delivery = [], created_ms = [];
  // Events arrive as the pane's HTML: each line carries its sequence number and sandbox time.
  const evs = (html) => [...html.matchAll(/data-seq="(\\d+)"><span class="since" data-ts="([^"]+)"/g)].map((x) => ({seq: +x[1], ts: +x[2]}));
  const runOnce = async (ownSocket) => {
    await new Promise((res) => setTimeout(res, 1500));  // let the pool refill, like a person would
    const t0 = performance.now();
    pg.send(JSON.stringify({type: "run", sandbox, task: "bench", body: script}));
    const created = await next(pg, (m) => m.type === "run_created" || m.type === "error" || m.type === "run_refused");
    if (created.type !== "run_created") throw new Error(JSON.stringify(created));
    created_ms.push(performance.now() - t0);
    const done = (m) => m.type === "status" && m.run_id === created.run_id && (m.status === "succeeded" || m.status === "failed");
    if (!ownSocket) {
      const seen = new Set();
      await new Promise((resolve) => {
        const handler = (e) => {
          const m = JSON.parse(e.data);
          if (m.type === "run_html" && m.run_id === created.run_id) {
            for (const ev of evs(m.html)) {
              if (seen.has(ev.seq)) continue;
              if (seen.size === 0) start.push(performance.now() - t0);
              seen.add(ev.seq);
              delivery.push(Date.now() - ev.ts * 1000);
            }
          }
          if (done(m)) { pg.removeEventListener("message", handler); resolve(); }
        };
        pg.addEventListener("message", handler);
      });
      return;
    }
    const rs = await open(`/ws/runs/${created.run_id}/`);
    await new Promise((resolve) => {
      let first = true;
      rs.onmessage = (e) => {
        if (first && evs(e.data).length) { separate.push(performance.now() - t0); first = false; }
      };
      rs.onclose = () => resolve();  // the run socket closes once the run has ended
    });
  };
  for (let r = 0; r < runs; r++) await runOnce(false);
  for (let r = 0; r < runs; r++) await runOnce(true);
  pg.close();
  return {validate, start, separate, delivery, created_ms};
}
"""


WORKERS: list[subprocess.Popen[bytes]] = []


def serve(var_dir: Path, pool_size: int) -> tuple[subprocess.Popen[bytes], str, dict[str, str]]:
    """Migrate, seed and start daphne and a worker; return daphne, its URL and environment."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "jazzmine_web.settings",
        "JAZZMINE_VAR_DIR": str(var_dir),
        "JAZZMINE_DATABASE_PATH": str(var_dir / "bench.sqlite3"),
        "JAZZMINE_POOL_SIZE": str(pool_size),
        "PYTHONPATH": str(ROOT),
        # Its own Redis namespace: a running deployment's worker must not take these runs.
        "JAZZMINE_REDIS_PREFIX": f"jazzmine-bench-{os.getpid()}-{pool_size}",
        **deployment_named(f"live-{pool_size}"),
    }
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--no-input"], env=env, check=True, capture_output=True)
    subprocess.run([*manage, "seed_demo"], env=env, check=True, capture_output=True)
    celery = str(Path(sys.executable).parent / "celery")
    worker_log = (var_dir / "worker.log").open("wb")
    worker = subprocess.Popen(
        [celery, "-A", "jazzmine_web", "worker", "--concurrency", "4",
         "--hostname", f"bench-{pool_size}@%h", "--without-mingle", "--without-gossip"],
        cwd=ROOT, env=env, stdout=worker_log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    WORKERS.append(worker)
    port = free_port()
    log = (var_dir / "daphne.log").open("wb")
    process = subprocess.Popen(
        [*web_command(), "-b", "127.0.0.1", "-p", str(port), "jazzmine_web.asgi:application"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(f"{url}/login/", timeout=1)
            return process, url, env
        except OSError:
            time.sleep(0.1)
    raise SystemExit("daphne did not start")


def measure(browser, label: str, pool_size: int) -> dict[str, list[float]]:
    """Start a server and measure it in a fresh browser context."""
    with tempfile.TemporaryDirectory(prefix="jazzmine-bench-") as tmp:
        process, url, env = serve(Path(tmp), pool_size)
        try:
            page = playground_page(browser, url)
            context = page.context
            sandbox = int(page.get_attribute("#playground", "data-sandbox"))
            # One run first: builds the sandbox image if needed and starts the pool.
            page.evaluate(PAGE_JS, [sandbox, 1, 1, SCRIPT])
            time.sleep(2)
            figures = page.evaluate(PAGE_JS, [sandbox, KEYSTROKES, RUNS, SCRIPT])
            context.close()
        finally:
            process.terminate()
            process.wait(timeout=30)
            while WORKERS:
                worker = WORKERS.pop()
                worker.terminate()
                worker.wait(timeout=60)
            deployment_images_clear(env)
    print(f"[{label}] measured", flush=True)
    return figures


def main() -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = browser_launch(playwright)
        warm = measure(browser, "warm pool", 2)
        cold = measure(browser, "cold start", 0)
        browser.close()

    def row(name: str, values: list[float]) -> str:
        return f"{name:<44} p50 {pct(values, 0.5):8.1f} ms   p95 {pct(values, 0.95):8.1f} ms   n={len(values)}"

    print()
    print(row("keystroke → violations (websocket)", warm["validate"]))
    print(row("sandbox emit → browser (warm server)", warm["delivery"]))
    print(row("sandbox emit → browser (cold server)", cold["delivery"]))
    print(row("Run → first event in browser, warm pool", warm["start"]))
    print(row("Run → first event in browser, cold start", cold["start"]))
    print(row("  of which: Run → run created (warm)", warm["created_ms"]))
    print(row("  same, second socket for the run (warm)", warm["separate"]))
    ratio = statistics.median(cold["start"]) / statistics.median(warm["start"])
    print(f"\ncold start / warm pool, Run → first event (p50): {ratio:.1f}x")
    socket_ratio = statistics.median(warm["separate"]) / statistics.median(warm["start"])
    print(f"second run socket / same socket, Run → first event (p50): {socket_ratio:.2f}x")


if __name__ == "__main__":
    main()
