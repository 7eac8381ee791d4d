"""Trial runs in the hardened sandbox, one per row of the spec's result table."""

from __future__ import annotations

from dataclasses import replace

import pytest

from jazzmine.sandbox.identity import FIRST_UID, LAST_UID
from jazzmine.scripttools import TrialStatus, classify, load_tool_dir, trial_run

from .samples import PRICES, RSI


def with_source(source: str, **changes):
    return replace(load_tool_dir(RSI), source=source, **changes)


@pytest.mark.docker
async def test_a_tool_printing_json_passes(base_image):
    result = await trial_run(load_tool_dir(RSI), {"symbol": "AAPL"}, image=base_image)
    assert result.status is TrialStatus.VALID_JSON and result.passed
    assert result.exit_code == 0
    assert result.data["symbol"] == "AAPL" and result.data["period"] == 14
    assert result.duration_ms > 0 and result.stderr == ""


@pytest.mark.docker
async def test_a_tool_printing_text_is_non_json(base_image):
    result = await trial_run(with_source("print('rsi is 50')\n"), {}, image=base_image)
    assert result.status is TrialStatus.NON_JSON and not result.passed
    assert result.stdout == "rsi is 50\n"


@pytest.mark.docker
async def test_a_tool_printing_nothing_is_empty(base_image):
    result = await trial_run(with_source("import sys\nsys.stdin.read()\n"), {}, image=base_image)
    assert result.status is TrialStatus.EMPTY


@pytest.mark.docker
async def test_a_failing_tool_is_a_script_error_with_its_stderr(base_image):
    result = await trial_run(load_tool_dir(RSI), {}, image=base_image)
    assert result.status is TrialStatus.SCRIPT_ERROR
    assert result.exit_code == 1
    assert result.message == "script error: missing required parameter: symbol"


@pytest.mark.docker
async def test_a_stuck_tool_times_out_and_is_killed(base_image):
    tool = with_source("import time\nwhile True:\n    time.sleep(0.1)\n", timeout=1)
    result = await trial_run(tool, {}, image=base_image)
    assert result.status is TrialStatus.TIMEOUT
    assert "timed out after 1 s" in result.message
    assert result.duration_ms < 8000


@pytest.mark.docker
async def test_a_node_tool_runs_in_the_base_image(base_image):
    result = await trial_run(load_tool_dir(PRICES), image=base_image)
    assert result.status is TrialStatus.VALID_JSON, result.stderr
    assert result.exit_code == 0 and result.data == {"min": 1, "max": 3, "mean": 2}


@pytest.mark.docker
async def test_a_third_party_import_is_a_missing_module(base_image):
    result = await trial_run(with_source("import yfinance\n"), {}, image=base_image)
    assert result.status is TrialStatus.MISSING_MODULE
    assert result.module == "yfinance"


@pytest.mark.docker
async def test_the_trial_runs_behind_the_sandbox_walls(base_image):
    probe = (
        "import json, os, socket, sys\n"
        "args = json.loads(sys.stdin.read() or '{}')\n"
        "def can(f):\n"
        "    try:\n        f()\n        return True\n"
        "    except OSError:\n        return False\n"
        "print(json.dumps({'uid': os.getuid(), 'args': args,\n"
        "    'write_root': can(lambda: open('/etc/x', 'w')),\n"
        "    'network': can(lambda: socket.create_connection(('1.1.1.1', 53), timeout=1))}))\n"
    )
    result = await trial_run(with_source(probe), {"symbol": "ÄPL"}, image=base_image)
    assert FIRST_UID <= result.data.pop("uid") <= LAST_UID  # its own uid (`identity`)
    assert result.data == {"args": {"symbol": "ÄPL"}, "write_root": False,
                           "network": False}  # fmt: skip


@pytest.mark.docker
async def test_a_missing_image_is_a_sandbox_error(docker_client):
    result = await trial_run(load_tool_dir(RSI), {}, image="jazzmine/missing:nope",
                             client=docker_client)  # fmt: skip
    assert result.status is TrialStatus.SANDBOX_ERROR and "not built" in result.message


@pytest.mark.parametrize(
    ("run", "status"),
    [
        ({"exit_code": 0, "stdout": '{"a": 1}\n', "stderr": ""}, TrialStatus.VALID_JSON),
        ({"exit_code": 0, "stdout": "{'a': 1}", "stderr": ""}, TrialStatus.NON_JSON),
        ({"exit_code": 0, "stdout": '{"a": NaN}', "stderr": ""}, TrialStatus.NON_JSON),
        ({"exit_code": 0, "stdout": "{}\n{}\n", "stderr": ""}, TrialStatus.NON_JSON),
        ({"exit_code": 0, "stdout": " \n", "stderr": "debug"}, TrialStatus.EMPTY),
        ({"exit_code": 2, "stdout": "", "stderr": "bad input\n"}, TrialStatus.SCRIPT_ERROR),
        ({"exit_code": None, "stdout": "", "stderr": "", "timed_out": True}, TrialStatus.TIMEOUT),
        ({"exit_code": 127, "stdout": "", "stderr": "node: command not found"},
         TrialStatus.MISSING_RUNTIME),
        ({"exit_code": 1, "stdout": "", "stderr": "Error: Cannot find module 'axios'"},
         TrialStatus.MISSING_MODULE),
    ],
)  # fmt: skip
def test_classification_follows_the_spec_table(run, status):
    assert classify(**run)[0] is status


def test_a_silent_failure_still_explains_itself():
    _, message, _, _ = classify(exit_code=3, stdout="", stderr="")
    assert message == "script error: exit code 3 and nothing on stderr"


@pytest.mark.docker
async def test_a_trials_error_names_its_secret_instead_of_quoting_it(base_image):
    # A trial's stderr and message reach every member of the team on the tool's page; a run
    # of the same tool had the key cut already (the runner's own redaction), a trial did not.
    key = "shopkey-LIVE-93jd8w2k/+"
    source = (
        "import os, sys, urllib.parse\n"
        "k = os.environ['SHOP_KEY']\n"
        "sys.stderr.write('Max retries exceeded with url: /v1/orders?api_key='"
        " + urllib.parse.quote(k, safe='') + ' raw=' + k + '\\n')\n"
        "sys.exit(1)\n"
    )
    tool = with_source(source)
    result = await trial_run(tool, {}, image=base_image, environment={"SHOP_KEY": key})
    assert result.status == TrialStatus.SCRIPT_ERROR
    for text in (result.stderr, result.message):
        assert "shopkey" not in text and "93jd8w2k" not in text, text
        assert "api_key=[secret SHOP_KEY] raw=[secret SHOP_KEY]" in text, text
