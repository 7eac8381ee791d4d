"""Sandbox latency, side by side on one image: warm pool, cold container, raw docker baselines.

Run: .venv/bin/python bench/sandbox.py   (needs a Docker engine; builds the bench image once)
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jazzmine.core.tools import SandboxConfig, ToolRegistry
from jazzmine.sandbox import RunLimits, RunRequest, SandboxBuilder
from jazzmine.sandbox.docker_runner import DockerRunner
from jazzmine.sandbox.pool import WarmPool

RUNS = 20
SCRIPT = "emit_log('hi')\nemit_result(1)\n"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


def row(name: str, first: list[float], result: list[float]) -> tuple[str, float, float]:
    print(f"{name:<34} first event p50 {pct(first, .5):7.1f} ms  p95 {pct(first, .95):7.1f} ms"
          f"   result p50 {pct(result, .5):7.1f} ms  p95 {pct(result, .95):7.1f} ms")  # fmt: skip
    return name, pct(first, 0.5), pct(result, 0.5)


async def timed(events) -> tuple[float, float, int]:
    started = time.perf_counter()
    first = result = 0.0
    count = 0
    async for event in events:
        count += 1
        now = time.perf_counter() - started
        first = first or now
        if event.type == "result":
            result = now
    return first, result, count


async def bench_pool(runner: DockerRunner, image: str, limits: RunLimits) -> tuple[list, list]:
    firsts, results = [], []
    async with WarmPool(runner, image, limits, size=2) as pool:
        for _ in range(RUNS):
            await pool.start()  # dispatch latency, not refill latency
            first, result, _ = await timed(pool.run(RunRequest(script=SCRIPT)))
            firsts.append(first)
            results.append(result)
    return firsts, results


async def bench_cold(runner: DockerRunner, image: str, limits: RunLimits) -> tuple[list, list]:
    firsts, results = [], []
    for _ in range(RUNS):
        first, result, _ = await timed(runner.bind(image, limits).run(RunRequest(script=SCRIPT)))
        firsts.append(first)
        results.append(result)
    return firsts, results


def bench_cli(command: list[str]) -> list[float]:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return times


async def bench_concurrent(runner: DockerRunner, image: str, limits: RunLimits) -> None:
    script = "for k in range(10):\n    emit_intermediate('k', k)\nemit_result(1)\n"
    async with WarmPool(runner, image, limits, size=4) as pool:
        started = time.perf_counter()
        counts = await asyncio.gather(*(timed(pool.run(RunRequest(script=script)))
                                        for _ in range(20)))  # fmt: skip
        elapsed = time.perf_counter() - started
    events = [c for _, _, c in counts]
    lost = sum(12 - c for c in events)
    print(f"20 concurrent runs through a pool of 4: {elapsed:.2f} s wall, "
          f"{sum(events)} events, expected {20 * 12}, lost {lost}")  # fmt: skip


async def main() -> None:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name="bench"))
    image = SandboxBuilder(registry).ensure_image("bench", on_log=lambda _line: None).tag
    limits = RunLimits()
    runner = DockerRunner()
    print(f"image {image}, {RUNS} runs each, trivial script (emit_log + emit_result)\n")

    warm = row("warm pool (dispatch → event)", *(await bench_pool(runner, image, limits)))
    cold = row("cold (create+start per run)", *(await bench_cold(runner, image, limits)))
    run_cli = bench_cli(["docker", "run", "--rm", "--network=none", image, "python3", "-c",
                         "print(1)"])  # fmt: skip
    docker_run = row("raw docker run --rm python3 -c", run_cli, run_cli)
    holder = subprocess.run(["docker", "run", "-d", "--rm", "--network=none", "--label",
                             "jazzmine.bench=1", image, "sleep", "infinity"],
                            check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip
    try:
        exec_cli = bench_cli(["docker", "exec", holder, "python3", "-c", "print(1)"])
    finally:
        subprocess.run(["docker", "rm", "-f", holder], check=False, capture_output=True)
    docker_exec = row("raw docker exec python3 -c", exec_cli, exec_cli)

    print("\nratios (p50, first event / completion):")
    for name, first, result in (cold, docker_run, docker_exec):
        print(f"  {name:<34} {first / warm[1]:7.1f}x slower to first event, "
              f"{result / warm[2]:6.1f}x slower to result than the warm pool")  # fmt: skip
    print()
    await bench_concurrent(runner, image, limits)


if __name__ == "__main__":
    asyncio.run(main())
