"""The channel to the host is out of the script's and the tools' reach, in a real sandbox."""

from __future__ import annotations

import pytest

from jazzmine.sandbox import Outcome, RunRequest
from jazzmine.sandbox.pool import WarmPool

from .helpers import collect, final, of_type

pytestmark = pytest.mark.docker


@pytest.fixture
async def pool(runner, wall_image, limits):
    async with WarmPool(runner, wall_image, limits, size=1) as pool:
        yield pool


async def run(pool: WarmPool, script: str, **request: object) -> list:
    return await collect(pool.run(RunRequest(script=script, **request)))  # type: ignore[arg-type]


async def test_a_tool_spraying_forged_result_and_exit_on_every_descriptor_changes_nothing(pool):
    events = await run(pool, "r = forge()\nemit_log('after')\nemit_result('real')\n")
    assert final(events).outcome is Outcome.RESULT
    assert of_type(events, "result")[0].data == "real"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    refused = [e for e in of_type(events, "log") if e.data["stream"] == "harness"]
    assert refused and all("did not write" in e.data["message"] for e in refused)


async def test_a_tool_cannot_read_the_harness_memory_or_environment(pool):
    script = (
        "emit_result({p + ' ' + h: peek(p, h).data or peek(p, h).message\n"
        "             for p in ['/proc/1/mem', '/proc/1/environ', '/proc/1/cmdline']\n"
        "             for h in ['subprocess', 'inprocess']})\n"
    )
    events = await run(pool, script, secrets={"API_KEY": "canary"})
    seen = of_type(events, "result")[0].data
    for path in ("/proc/1/mem", "/proc/1/environ"):
        assert "PermissionError" in str(seen[f"{path} subprocess"]), seen
        assert "PermissionError" in str(seen[f"{path} inprocess"]), seen
    assert "canary" not in str(seen)


async def test_a_script_tool_cannot_read_the_worker_that_runs_the_script(pool):
    script = (
        "pids = [str(n) for n in range(2, 12)]\n"
        "emit_result({p: peek('/proc/' + p + '/environ').data for p in pids})\n"
    )
    events = await run(pool, script, secrets={"API_KEY": "canary"})
    seen = of_type(events, "result")[0].data
    assert all(v in ("PermissionError", "FileNotFoundError") or v.endswith(" 0")
               for v in seen.values()), seen  # fmt: skip


async def test_a_tool_outside_the_allowed_set_is_refused_where_it_runs(pool):
    script = (
        "r = update_order(order_id='o1', status='cancelled')\n"
        "emit_result([r.success, r.message, get_orders().success])\n"
    )
    events = await run(pool, script, allowed_tools=frozenset({"get_orders"}))
    success, message, allowed_ok = of_type(events, "result")[0].data
    assert success is False and allowed_ok is True
    assert message.startswith("Tool 'update_order' is not allowed in this run")
    (note,) = [e for e in of_type(events, "log") if e.data["stream"] == "harness"]
    assert "refused a call to tool 'update_order'" in note.data["message"]


async def test_an_empty_allowed_set_refuses_every_tool_including_script_tools(pool):
    events = await run(pool, "emit_result(peek('/etc/hostname').success)\n",
                       allowed_tools=frozenset())  # fmt: skip
    assert of_type(events, "result")[0].data is False


async def test_a_memory_bomb_in_the_worker_is_still_reported_as_memory_killed(pool):
    events = await run(pool, "hoard = []\nwhile True:\n    hoard.append('x' * 10_000_000)\n")
    assert final(events).outcome is Outcome.MEMORY_KILLED
