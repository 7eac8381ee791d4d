"""Compare the start of a run between two checkouts, side by side, with their runs interleaved.

Run: .venv/bin/python bench/ab.py BASE_TREE [runs]   (Redis and Docker must answer)

BASE_TREE is another checkout of the project (e.g. `git worktree add /tmp/base main`). Both
trees are started at once as the embedded deployment (SQLite, one daphne, one worker with a
warm pool), each on a fresh database with the demo data, and measured alternately: run 1 on
one, run 1 on the other (which goes first alternates), and so on. Whatever else the machine
does then weighs on both alike; figures from two separate invocations on this two-core
machine differ by up to 2x, which hides any change smaller than that.

Per tree, p50/p95 in milliseconds, as in bench/stages.py:

- Run → first event in the browser: the playground's run message to the run's first event on
  its socket (Chromium, as a person);
- Run → run_created: the web process's answer to the run message;
- sandbox emit → browser, first event: its sandbox timestamp to its arrival in the page;
- enqueue → first event emitted: the row's `enqueued_at` to the first event's sandbox time;
- the CPU its web process and its worker spent per run (steadier than the wall clock).

The ratio is this tree's median over BASE_TREE's. Not a test.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def serve(tree: Path) -> None:
    """Child mode: start `tree`'s embedded deployment, say where it is, wait for stdin to close."""
    sys.path.insert(0, str(tree))
    from bench.team import deployed

    tmp = Path(tempfile.mkdtemp(prefix="jazzmine-ab-"))
    with deployed("embedded", tmp) as deployment:
        where = {
            "url": deployment.web_a.url,
            "db": str(tmp / "bench.sqlite3"),
            "pids": {
                "web": [deployment.web_a.process.pid],
                "worker": [worker.process.pid for worker in deployment.workers],
            },
        }
        print(json.dumps(where), flush=True)
        sys.stdin.read()


class Tree:
    """One checkout's deployment, started in a child process, and its page in Chromium."""

    def __init__(self, name: str, tree: Path) -> None:
        self.name = name
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve", str(tree)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"{name}: the deployment of {tree} did not start")
        where = json.loads(line)
        self.url, self.db, self.pids = where["url"], where["db"], where["pids"]
        self.page: Any = None
        self.sandbox = 0
        self.figures: dict[str, list[float]] = {
            "browser": [], "created": [], "emit": [], "enqueue": []
        }  # fmt: skip
        self.cpu: dict[str, float] = {}

    def open(self, browser: Any, start_js: str, body: str) -> None:
        from bench.common import DEMO_PASSWORD, playground_page

        # The deployments of bench.team seed the demo logins with the bench's own password.
        self.page = playground_page(browser, self.url, DEMO_PASSWORD)
        self.sandbox = int(self.page.get_attribute("#playground", "data-sandbox"))
        self.page.evaluate(start_js, [self.sandbox, body])  # builds the image, fills the pool

    def measure(self, start_js: str, body: str) -> None:
        started = self.page.evaluate(start_js, [self.sandbox, body])
        from bench.team import first_event_ms

        self.figures["browser"].append(started["first_ms"])
        self.figures["created"].append(started["created_ms"])
        self.figures["emit"].append(started["emit_ms"])
        self.figures["enqueue"].append(
            first_event_ms(Path(self.db), started["run_id"], "enqueued_at")
        )

    def cpu_seconds(self) -> dict[str, float]:
        """Return the CPU time its web process and its worker have used so far."""
        from bench.common import cpu_seconds

        return {name: sum(map(cpu_seconds, pids)) for name, pids in self.pids.items()}

    def stop(self) -> None:
        if self.process.stdin is not None:
            with contextlib.suppress(Exception):
                self.process.stdin.close()
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()


FIGURES = (
    ("Run → first event in the browser", "browser"),
    ("Run → run_created", "created"),
    ("sandbox emit → browser, first event", "emit"),
    ("enqueue → first event emitted", "enqueue"),
)


def main() -> None:
    if sys.argv[1:2] == ["--serve"]:
        serve(Path(sys.argv[2]))
        return
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    sys.path.insert(0, str(ROOT))
    from playwright.sync_api import sync_playwright

    from bench.common import browser_launch, compare_rows
    from bench.team import QUICK, START_JS

    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    trees = [Tree("base", Path(sys.argv[1]).resolve()), Tree("this", ROOT)]
    try:
        with sync_playwright() as playwright:
            browser = browser_launch(playwright)
            for tree in trees:
                tree.open(browser, START_JS, QUICK)
            before = [tree.cpu_seconds() for tree in trees]
            for i in range(runs):
                for tree in trees if i % 2 == 0 else trees[::-1]:
                    time.sleep(1.0)  # let the pool refill, as between two runs of a person
                    tree.measure(START_JS, QUICK)
            for tree, spent in zip(trees, before, strict=True):
                now = tree.cpu_seconds()
                tree.cpu = {name: (now[name] - spent[name]) * 1000 / runs for name in now}
            browser.close()
    finally:
        for tree in trees:
            tree.stop()
    base, this = trees
    print(
        f"\n{'(ms, ' + str(runs) + ' interleaved runs each)':<36} {'base':>22}   {'this':>22}   ratio"
    )
    print("\n".join(compare_rows(FIGURES, [t.figures for t in trees])))

    print(f"{'CPU per run (ms, the 1 s pauses included)':<36} {'base':>22}   {'this':>22}   ratio")
    for name in base.cpu:
        spent = [base.cpu[name], this.cpu[name]]
        ratio = spent[1] / spent[0] if spent[0] else float("nan")
        print(f"  {name:<34} {spent[0]:>22.1f}   {spent[1]:>22.1f}   {ratio:5.2f}x")


if __name__ == "__main__":
    main()
