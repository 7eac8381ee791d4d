"""Where the time of a run's start goes, stage by stage, in both deployments of bench/team.py.

Run: .venv/bin/python bench/stages.py [runs]  (Redis, PostgreSQL and Docker must answer)

A run is started from the playground's socket in Chromium, as a person does, and timed from
its row's columns (every clock is this machine's):

    browser sends Run ─► row created (enqueued_at) ─► claimed by the worker, with RUNNING
      when its image is known (claimed_at = started_at) ─► first event emitted in the sandbox
      (its ts) ─► first event on the browser's socket

The claim comes after the worker's reads of what the run needs (one step on its DB thread),
so "enqueue → claimed" is the task's trip through the broker plus those reads.

"web" is what is left of the browser's figure once the stages in between are taken out: the
socket's trip in, the web process's checks and its row, and the event's way back out.

On two cores the processes of a run wait for each other's CPU, so the wall-clock figures swing
with everything else the machine does; the CPU each process spends per run (its user + system
time over the measured runs, the 1 s pauses included) is the steadier figure to compare.
The ratio compares the team deployment (PostgreSQL, web A and B) with the embedded one.
Not a test.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    DEMO_PASSWORD,
    browser_launch,
    cpu_seconds,
    pct,
    pids_named,
    playground_page,
)
from bench.team import QUICK, START_JS, Deployment, deployed, epoch  # noqa: E402

STAGES = (
    ("Run → first event in the browser", "browser"),
    ("  Run → run_created on the socket", "created"),
    ("  Run → run pane on the socket", "pane"),
    ("  enqueue → claimed (and read)", "claim"),
    ("  claimed → first event emitted", "dispatch"),
    ("  enqueue → first event emitted", "enqueue"),
    ("  web (socket in, row, event out)", "web"),
)


def stages_of(deployment: Deployment, run_id: str, marks: dict[str, Any]) -> dict[str, float]:
    """Return one run's stages in milliseconds, from its row and its first event."""
    key = deployment.run_key(run_id)
    enqueued, claimed = deployment.read(
        "SELECT enqueued_at, claimed_at FROM runs_run WHERE id = ?", (key,)
    )[0]
    ((first,),) = deployment.read(
        "SELECT ts FROM runs_runevent WHERE run_id = ? ORDER BY seq LIMIT 1", (key,)
    )
    enqueued_s, claimed_s = epoch(enqueued), epoch(claimed)
    enqueue_ms = (first - enqueued_s) * 1000
    browser_ms = marks["first_ms"]
    return {
        "browser": browser_ms,
        "created": marks["created_ms"],
        "pane": marks["pane_ms"],
        "claim": (claimed_s - enqueued_s) * 1000,
        "dispatch": (first - claimed_s) * 1000,
        "enqueue": enqueue_ms,
        "web": browser_ms - enqueue_ms,
    }


CPU = ("web", "worker", "redis", "docker engine")


def cpu_processes(deployment: Deployment) -> dict[str, list[int]]:
    """Return the processes whose CPU a run spends: its web process, worker, Redis, Docker."""
    return {
        "web": [deployment.web_a.process.pid],
        "worker": [worker.process.pid for worker in deployment.workers],
        "redis": pids_named("redis-server"),
        "docker engine": pids_named("dockerd", "containerd"),
    }


def measure(browser: Any, label: str, runs: int) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {key: [] for _name, key in STAGES}
    with deployed(label, Path(tempfile.mkdtemp(prefix=f"jazzmine-stages-{label}-"))) as deployment:
        page = playground_page(browser, deployment.web_a.url, DEMO_PASSWORD)
        sandbox = int(page.get_attribute("#playground", "data-sandbox"))
        page.evaluate(START_JS, [sandbox, QUICK])  # builds the image, fills the pool
        processes = cpu_processes(deployment)
        before = {name: sum(map(cpu_seconds, pids)) for name, pids in processes.items()}
        for _ in range(runs):
            time.sleep(1.0)  # let the pool refill, as between two runs of a person
            started = page.evaluate(START_JS, [sandbox, QUICK])
            one = stages_of(deployment, started["run_id"], started)
            for key, value in one.items():
                figures[key].append(value)
        for name, pids in processes.items():
            spent = sum(map(cpu_seconds, pids)) - before[name]
            figures[f"cpu {name}"] = [spent * 1000 / runs]
        page.context.close()
    print(f"[{label}] measured", flush=True)
    return figures


def main() -> None:
    from playwright.sync_api import sync_playwright

    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    with sync_playwright() as playwright:
        browser = browser_launch(playwright)
        embedded = measure(browser, "embedded", runs)
        team = measure(browser, "team", runs)
        browser.close()
    print()
    print(f"{'(ms, ' + str(runs) + ' runs)':<36} {'embedded':>22}   {'team':>22}   ratio")
    for name, key in STAGES:
        cells = [
            f"p50 {pct(f[key], 0.5):6.1f}  p95 {pct(f[key], 0.95):6.1f}" for f in (embedded, team)
        ]
        base = statistics.median(embedded[key])
        ratio = statistics.median(team[key]) / base if base else float("nan")
        print(f"{name:<36} {cells[0]:>22}   {cells[1]:>22}   {ratio:5.2f}x")
    print()
    print(f"{'CPU per run (ms, by process)':<36} {'embedded':>22}   {'team':>22}   ratio")
    for name in CPU:
        spent = [f[f"cpu {name}"][0] for f in (embedded, team)]
        ratio = spent[1] / spent[0] if spent[0] else float("nan")
        print(f"  {name:<34} {spent[0]:>22.1f}   {spent[1]:>22.1f}   {ratio:5.2f}x")


if __name__ == "__main__":
    main()
