"""What a bash script's check costs with the drawn-as-comment reading, beside the check without it.

Run: .venv/bin/python bench/bash_check.py

Every bash script that comes in (the editor's keystrokes, Auto, the playground's Run, the API)
gets the light check and the unknown-command check (`script_problems`); since the review page
drew code as a comment, it is also held to what pygments draws as a comment
(`studio.drawn.comments_that_run`: a lexing and one or two bashkit readings when the script has
comments). Both are timed here in one process, on the same scripts: an agent's ten lines with
comments, a 300-line script of them, and one without any comment (the new reading skips it).
Medians of several rounds; the ratio is the check with the reading over the check without.
Not a test.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jazzmine.bash.generator import script_problems  # noqa: E402
from jazzmine_web.studio.drawn import comments_that_run  # noqa: E402

TOOLS = ["get_orders", "get_user", "update_order_status", "send_receipt", "search_products"]
AGENT = """\
# Ship the delivered orders' receipts, then say how many went out.
orders=$(get_orders --status delivered)  # the shop's own list
count=$(echo "$orders" | jq '.orders | length')
for id in $(echo "$orders" | jq -r '.orders[].id'); do
  send_receipt --order_id "$id" --email "ops@example.com"  # one per order
done
# Done: tell the person.
echo "sent $count receipts"
"""
SCRIPTS = {
    "10 lines, comments": AGENT,
    "300 lines, comments": AGENT * 37,
    "10 lines, no comment": "\n".join(
        line.split("#")[0].rstrip() for line in AGENT.splitlines() if not line.startswith("#")
    ),
}
ROUNDS = 7


def timed(fn, body: str, repeat: int) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        fn(body)
    return (time.perf_counter() - started) / repeat * 1000


def without(body: str) -> list[str]:
    return script_problems(body, max_chars=100_000, tools=TOOLS)


def with_reading(body: str) -> list[str]:
    return without(body) or comments_that_run(body)


def main() -> None:
    print(
        f"{'(ms per check, median of ' + str(ROUNDS) + ')':<28} {'without':>10} {'with':>10}  ratio"
    )
    for name, body in SCRIPTS.items():
        assert with_reading(body) == [], with_reading(body)
        repeat = 20 if len(body) < 2000 else 3
        timed(with_reading, body, 1)  # warm: imports, the lexer
        base = statistics.median(timed(without, body, repeat) for _ in range(ROUNDS))
        new = statistics.median(timed(with_reading, body, repeat) for _ in range(ROUNDS))
        print(f"{name:<28} {base:>10.2f} {new:>10.2f}  {new / base:5.2f}x")


if __name__ == "__main__":
    main()
