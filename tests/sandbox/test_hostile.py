"""Hostile scripts that slipped past the validator on purpose, run straight at the runner.

Most run unrestricted (full builtins, `import os`), a test-only mode, to prove that the
container itself holds when the harness's restricted builtins are gone. After each one the
pool still serves a clean run and no container is left (see conftest).
"""

from __future__ import annotations

import pytest

from jazzmine.sandbox import Outcome, RunRequest
from jazzmine.sandbox.identity import FIRST_UID, LAST_UID
from jazzmine.sandbox.pool import WarmPool

from .helpers import collect, final, of_type

pytestmark = pytest.mark.docker


@pytest.fixture
async def pool(hostile_runner, image, limits):
    async with WarmPool(hostile_runner, image, limits, size=1) as pool:
        yield pool
        # The pool is fine afterwards: a fresh sandbox serves a normal run.
        events = await collect(pool.run(RunRequest(script="emit_result(add(20, 22).data)\n")))
        assert of_type(events, "result")[0].data == 42


async def hostile(pool: WarmPool, script: str) -> list:
    return await collect(pool.run(RunRequest(script=script, unrestricted=True)))


def result_of(events: list):
    assert final(events).outcome is Outcome.RESULT, events
    return of_type(events, "result")[0].data


async def test_network_access_fails(pool):
    script = (
        "import socket\nerrors = []\n"
        "for host in [('1.1.1.1', 80), ('172.17.0.1', 2375), ('pypi.org', 443)]:\n"
        "    try:\n"
        "        socket.create_connection(host, timeout=2)\n"
        "        errors.append('connected')\n"
        "    except OSError as e:\n"
        "        errors.append(type(e).__name__)\n"
        "emit_result(errors)\n"
    )
    assert "connected" not in result_of(await hostile(pool, script))


async def test_shadow_and_host_paths_are_out_of_reach(pool):
    script = (
        "import os\nseen = {}\n"
        "for path in ['/etc/shadow', '/work/main/pyproject.toml', '/var/run/docker.sock',\n"
        "             '/root/.bash_history', '/proc/1/environ']:\n"
        "    try:\n"
        "        open(path, 'rb').read(10)\n"
        "        seen[path] = 'read'\n"
        "    except OSError as e:\n"
        "        seen[path] = type(e).__name__\n"
        "emit_result([os.getuid(), seen])\n"
    )
    uid, seen = result_of(await hostile(pool, script))
    assert FIRST_UID <= uid <= LAST_UID  # its own uid (`identity`), no account of the host
    assert "read" not in {v for k, v in seen.items() if k != "/proc/1/environ"}
    assert seen["/etc/shadow"] == "PermissionError"


async def test_writing_outside_tmp_fails_and_tmp_is_noexec(pool):
    script = (
        "import os, subprocess\nresults = {}\n"
        "for path in ['/etc/evil', '/opt/jazzmine/harness.py', '/usr/bin/evil', '/tmp/ok.sh',\n"
        "             '/opt/jazzmine/jazzmine/sandbox/harness/relay.py']:\n"
        "    try:\n"
        "        with open(path, 'w') as f:\n"
        "            f.write('#!/bin/sh\\necho pwned\\n')\n"
        "        results[path] = 'written'\n"
        "    except OSError as e:\n"
        "        results[path] = type(e).__name__\n"
        "os.chmod('/tmp/ok.sh', 0o755)\n"
        "try:\n"
        "    subprocess.run(['/tmp/ok.sh'], check=True)\n"
        "    results['exec'] = 'ran'\n"
        "except OSError as e:\n"
        "    results['exec'] = type(e).__name__\n"
        "emit_result(results)\n"
    )
    results = result_of(await hostile(pool, script))
    assert results == {"/etc/evil": "OSError", "/opt/jazzmine/harness.py": "OSError",
                       "/opt/jazzmine/jazzmine/sandbox/harness/relay.py": "OSError",
                       "/usr/bin/evil": "OSError", "/tmp/ok.sh": "written",
                       "exec": "PermissionError"}  # fmt: skip


async def test_a_fork_bomb_hits_the_pids_limit(pool, limits):
    script = (
        "import os, time\nforked = 0\nrefused = 0\n"
        "for _ in range(400):\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(60)\n"
        "            os._exit(0)\n"
        "        forked += 1\n"
        "    except OSError:\n"
        "        refused += 1\n"
        "emit_result({'forked': forked, 'refused': refused})\n"
    )
    counts = result_of(await hostile(pool, script))
    assert counts["forked"] < limits.pids_limit
    assert counts["refused"] > 0


async def test_a_memory_bomb_is_killed(pool):
    events = await hostile(pool, "hoard = []\nwhile True:\n    hoard.append(bytearray(10**7))\n")
    assert final(events).outcome is Outcome.MEMORY_KILLED


async def test_an_infinite_loop_times_out(hostile_runner, image, limits):
    short = limits.__class__(**{**limits.__dict__, "timeout_seconds": 1.0})
    async with WarmPool(hostile_runner, image, short, size=1) as pool:
        events = await hostile(pool, "while True:\n    pass\n")
    assert final(events).outcome is Outcome.TIMEOUT


async def test_raw_output_floods_are_cut(pool):
    script = "import os\nchunk = b'z' * 65536\nfor _ in range(1600):\n    os.write(1, chunk)\n"
    events = await hostile(pool, script)
    assert final(events).outcome is Outcome.OUTPUT_LIMIT


async def test_an_undeclared_secret_is_not_visible(pool, registry, monkeypatch):
    monkeypatch.setenv("HOST_ONLY_SECRET", "host")
    request = RunRequest.for_sandbox(
        "emit_result([read_env('API_KEY').data, read_env('DB_PASSWORD').data,"
        " read_env('HOST_ONLY_SECRET').data])\n",
        declared_secrets=registry.aggregate_secrets("sandbox-tests"),
        secret_store={"API_KEY": "declared", "DB_PASSWORD": "undeclared"},
    )
    events = await collect(pool.run(request))
    assert result_of(events) == ["declared", None, None]


async def test_breaking_json_dumps_does_not_hang_or_break_the_run(pool):
    events = await collect(pool.run(RunRequest(
        script="json.dumps = lambda *a, **k: 'x'\nemit_log('still fine')\nemit_result({'a': 1})\n"
    )))  # fmt: skip
    assert result_of(events) == {"a": 1}
    assert of_type(events, "log")[0].data["message"] == "still fine"
