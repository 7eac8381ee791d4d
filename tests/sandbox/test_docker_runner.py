"""DockerRunner: streaming, and every way a run can end, each with one explicit final event."""

from __future__ import annotations

import dataclasses
import time

import docker
import pytest

from jazzmine.core.tools import ScriptGenerator, body_offset
from jazzmine.sandbox import Outcome, RunRequest, UnrestrictedRefused
from jazzmine.sandbox.docker_runner import DockerRunner

from .helpers import collect, final, of_type
from .sample_tools import TEST_SANDBOX

pytestmark = pytest.mark.docker


async def test_a_happy_run_streams_intermediate_log_result_in_order(runner, image, limits):
    script = ('emit_intermediate("fetched", {"n": add(1, 2).data})\n'
              'emit_log("thinking")\ntime.sleep(0.3)\nemit_result({"done": True})\n')  # fmt: skip
    arrivals = []
    async for event in runner.bind(image, limits).run(RunRequest(script=script)):
        arrivals.append((time.monotonic(), event))
    events = [e for _, e in arrivals]
    assert [e.type for e in events] == ["intermediate", "log", "result", "exit"]
    assert [e.seq for e in events] == [1, 2, 3, 4]
    assert events[0].data == {"label": "fetched", "data": {"n": 3}}
    # Streamed as they happen: the intermediate arrived before the sleep ended.
    assert arrivals[2][0] - arrivals[0][0] >= 0.25
    assert final(events).data["outcome"] == "result"
    assert final(events).data["backend"] == "docker"


async def test_a_script_error_reports_body_lines(runner, image, limits, registry):
    body = "values = [1, 2]\nemit_log('x')\nvalues[5]\n"
    script = ScriptGenerator(registry).assemble_script(body, TEST_SANDBOX)
    request = RunRequest(script=script, body_offset=body_offset(script))
    events = await collect(runner.bind(image, limits).run(request))
    error = of_type(events, "error")[0].data
    assert (error["exception"], error["line"]) == ("IndexError", 3)
    assert final(events).outcome is Outcome.SCRIPT_ERROR


async def test_a_timeout_kills_the_container(runner, image, limits):
    started = time.monotonic()
    short = dataclasses.replace(limits, timeout_seconds=1.5)
    events = await collect(
        runner.bind(image, short).run(RunRequest(script="while True:\n    pass\n"))
    )
    assert time.monotonic() - started < 6
    assert final(events).outcome is Outcome.TIMEOUT
    assert "timed out after 1.5 s" in of_type(events, "error")[0].data["message"]


async def test_a_memory_bomb_is_killed_and_said_so(runner, image, limits):
    script = "hoard = []\nwhile True:\n    hoard.append('x' * 10_000_000)\n"
    events = await collect(runner.bind(image, limits).run(RunRequest(script=script)))
    assert final(events).outcome is Outcome.MEMORY_KILLED
    assert final(events).data["message"] == ("killed: memory limit of 128 MiB exceeded (OOMKilled)")


async def test_100_mb_of_output_is_cut_with_a_marker(runner, image, limits):
    script = "line = 'y' * 1000\nfor i in range(100_000):\n    print(line)\nemit_result(1)\n"
    events = await collect(runner.bind(image, limits).run(RunRequest(script=script)))
    assert final(events).outcome is Outcome.OUTPUT_LIMIT
    marker = of_type(events, "error")[-1].data
    assert marker["kind"] == "output_limit" and "200000 bytes" in marker["message"]
    assert len(of_type(events, "log")) < 300


async def test_a_harness_that_dies_is_a_container_crash(hostile_runner, image, limits):
    script = "import os\nemit_log('about to die')\nos._exit(3)\n"
    request = RunRequest(script=script, unrestricted=True)
    events = await collect(hostile_runner.bind(image, limits).run(request))
    assert final(events).outcome is Outcome.CONTAINER_CRASH
    assert final(events).data["exit_code"] == 3
    assert of_type(events, "log")[0].data["message"] == "about to die"


async def test_an_unreachable_engine_is_reported_not_raised(image, limits):
    client = docker.DockerClient(base_url="unix:///nonexistent/docker.sock", version="1.41")
    events = await collect(
        DockerRunner(client).bind(image, limits).run(RunRequest(script="emit_result(1)"))
    )
    assert final(events).outcome is Outcome.ENGINE_UNAVAILABLE
    assert "unavailable" in final(events).data["message"]


async def test_a_missing_image_is_reported_as_not_built(runner, limits):
    events = await collect(
        runner.bind("jazzmine/sandbox-nope:0", limits).run(RunRequest(script="x"))
    )
    assert final(events).outcome is Outcome.BUILD_FAILED


async def test_unrestricted_requests_are_refused_by_a_default_runner(runner, image, limits):
    with pytest.raises(UnrestrictedRefused):
        await collect(runner.bind(image, limits).run(RunRequest(script="x", unrestricted=True)))
