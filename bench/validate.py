"""Time `validate_script` against bare `ast.parse` on the same realistic scripts.

Run: .venv/bin/python bench/validate.py

The mix is built deterministically from the benign test corpus: every corpus script on its own
(the ~10-line scripts an LLM usually writes) plus 300-line scripts stitched together from
renamed copies of them. Both timings run in the same process, over the same sources, several
rounds each; the medians are compared. The budget is validate <= 2x parse.
"""

from __future__ import annotations

import ast
import gc
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jazzmine.core.tools.validator import validate_script  # noqa: E402

CORPUS = ROOT / "tests" / "core" / "tools" / "corpus" / "benign"
TOOLS = ("get_orders", "get_user", "search_products", "update_order", "send_email")
PREAMBLE = "# Available tools: " + ", ".join(TOOLS) + "\n# Helpers: emit_result, emit_log\n"
LONG_LINES = 300
LONG_SCRIPTS = 12
ROUNDS = 15


def corpus_bodies() -> list[str]:
    """Read the benign corpus scripts in a stable order."""
    return [p.read_text() for p in sorted(CORPUS.glob("*.py"))]


def long_script(bodies: list[str], rng: random.Random, number: int) -> str:
    """Stitch renamed corpus scripts together until the script has LONG_LINES lines."""
    parts: list[str] = []
    lines = 0
    copy = 0
    while lines < LONG_LINES:
        body = rng.choice(bodies)
        parts.append(f"# part {number}.{copy}\n{body}")
        lines += body.count("\n")
        copy += 1
    return "".join(parts)


def build_mix() -> list[str]:
    """Return the short and long scripts, each with the generator's comment preamble."""
    bodies = corpus_bodies()
    rng = random.Random(20240611)
    short = [PREAMBLE + body + "\n" for body in bodies]
    long = [PREAMBLE + long_script(bodies, rng, n) + "\n" for n in range(LONG_SCRIPTS)]
    return short + long


def time_round(func, sources: list[str]) -> float:
    """Return the seconds `func` takes over all sources once."""
    start = time.perf_counter()
    for source in sources:
        func(source)
    return time.perf_counter() - start


def main() -> None:
    """Measure and print µs/script for parse and validate, and their ratio."""
    sources = build_mix()
    for source in sources:
        violations = validate_script(source, TOOLS)
        if violations:
            raise SystemExit(f"benchmark script is not clean: {violations[:3]}")

    def validate(source: str) -> list[str]:
        return validate_script(source, TOOLS)

    groups = {
        "short": [s for s in sources if s.count("\n") < 100],
        "long": [s for s in sources if s.count("\n") >= 100],
        "all": sources,
    }
    gc.disable()  # collections landing in one timing and not the other would skew the ratio
    try:
        for label, group in groups.items():
            parse_times: list[float] = []
            validate_times: list[float] = []
            for _ in range(ROUNDS):
                parse_times.append(time_round(ast.parse, group))
                validate_times.append(time_round(validate, group))
                gc.collect()
            parse_us = statistics.median(parse_times) / len(group) * 1e6
            validate_us = statistics.median(validate_times) / len(group) * 1e6
            lines = sum(s.count("\n") for s in group) / len(group)
            print(
                f"{label:>5}: {len(group):3d} scripts, {lines:6.1f} lines avg | "
                f"ast.parse {parse_us:8.1f} µs/script | validate_script {validate_us:8.1f} "
                f"µs/script | ratio {validate_us / parse_us:.2f}x"
            )
    finally:
        gc.enable()
    bench_build_prompt()


def bench_build_prompt() -> None:
    """Time ScriptGenerator.build_prompt with the tools XML cold (rebuilt) and cached."""
    import importlib

    from jazzmine.core.tools import ScriptGenerator

    registry = importlib.import_module("demo.ecommerce").registry
    generator = ScriptGenerator(registry)
    task = "Total the revenue of delivered orders and name the best customer."
    n = 2000
    cold: list[float] = []
    for _ in range(n):
        registry._invalidate("ecommerce")  # what a tool change does to the cache
        start = time.perf_counter()
        generator.build_prompt(task, "ecommerce")
        cold.append(time.perf_counter() - start)
    warm: list[float] = []
    for _ in range(n):
        start = time.perf_counter()
        generator.build_prompt(task, "ecommerce")
        warm.append(time.perf_counter() - start)
    cold_us = statistics.median(cold) * 1e6
    warm_us = statistics.median(warm) * 1e6
    print(
        f"build_prompt (5 demo tools): cold {cold_us:.1f} µs | cached {warm_us:.1f} µs | "
        f"cold/cached {cold_us / warm_us:.1f}x"
    )


if __name__ == "__main__":
    main()
