"""What the benchmarks share: percentiles, Chromium, and a logged-in playground page."""

from __future__ import annotations

import contextlib
import os
import statistics
from collections.abc import Mapping
from typing import Any

CHROMIUM = os.environ.get("JAZZMINE_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]  # fmt: skip


def cpu_seconds(pid: int) -> float:
    """Return the CPU time (user + system) a process has used so far, in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()  # after the command, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pids_named(*names: str) -> list[int]:
    """Return the ids of this machine's processes running one of these commands."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as comm:
                    if comm.read().strip() in names:
                        found.append(int(entry))
            except OSError:
                continue  # it ended meanwhile
    return found


def pct(values: list[float], q: float) -> float:
    """Return the q-quantile of the values (the nearest rank at or below it)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def deployment_named(label: str) -> dict[str, str]:
    """Return the environment naming a bench deployment: its images are filed under the name."""
    return {"JAZZMINE_DEPLOYMENT": f"bench-{label}-{os.getpid()}"}


def deployment_images_clear(env: Mapping[str, str]) -> None:
    """Remove the sandbox images a bench deployment made, once its processes have stopped.

    Each run of a bench is a deployment of its own (its images nobody's cache afterwards):
    kept, they piled up on the one engine by the dozen per run and slowed its listings.
    """
    import docker
    import docker.errors

    from jazzmine.sandbox.builder import deployment_images_remove

    with contextlib.suppress(docker.errors.DockerException):
        client = docker.from_env(timeout=60)
        deployment_images_remove(client, env["JAZZMINE_DEPLOYMENT"] + "-")


def browser_launch(playwright: Any) -> Any:
    """Start Debian's Chromium headless, as the end-to-end tests do."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)


# A shared database refuses the demo passwords the README prints (`seed_demo`): the bench's
# deployments set this one everywhere, and sign in with it.
DEMO_PASSWORD = "bench-demo-pass-7"
DEMO_ENV = {
    "JAZZMINE_DEMO_PASSWORD": DEMO_PASSWORD,
    "JAZZMINE_DEMO_REVIEWER_PASSWORD": "bench-review-pass-7",
}


def playground_page(browser: Any, url: str, password: str = "jazzmine-demo") -> Any:
    """Log the demo user in to a server in a fresh context; return its open playground page."""
    context = browser.new_context(base_url=url)
    page = context.new_page()
    page.goto("/login/")
    page.fill("input[name=username]", "demo")
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/")
    page.goto("/playground/")
    page.wait_for_selector("#playground[data-socket=open]")
    return page


def compare_rows(
    figures: tuple[tuple[str, str], ...],
    sides: list[dict[str, list[float]]],
    *,
    width: int = 36,
    cell: int = 22,
) -> list[str]:
    """Return one line per figure: p50/p95 of each side, and the second's median over the first's."""
    lines = []
    for label, key in figures:
        cells = [f"p50 {pct(s[key], 0.5):6.1f}  p95 {pct(s[key], 0.95):6.1f}" for s in sides]
        ratio = statistics.median(sides[1][key]) / statistics.median(sides[0][key])
        lines.append(f"{label:<{width}} {cells[0]:>{cell}}   {cells[1]:>{cell}}   {ratio:5.2f}x")
    return lines
