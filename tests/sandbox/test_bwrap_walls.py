"""The bubblewrap sandbox shows only what Python needs and refuses the kernel's risky calls."""

from __future__ import annotations

import os
import platform

import pytest

from jazzmine.sandbox import Outcome, RunLimits

from .bwrap_support import requires_bwrap, run_unrestricted, runtime_dir
from .helpers import final, of_type

pytestmark = requires_bwrap
__all__ = ["runtime_dir"]  # the fixture, used by name

LIMITS = RunLimits(memory_mb=256, pids_limit=32, timeout_seconds=15)

# Each call returns the errno name it failed with, or "ok"; clone children leave at once.
SYSCALLS = """
import ctypes, errno, os, socket
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def outcome(result):
    if result == 0 and os.getpid() != me:
        os._exit(0)
    return errno.errorcode.get(ctypes.get_errno(), 'ok') if result == -1 else 'ok'
def call(fn, *args):
    ctypes.set_errno(0)
    return outcome(fn(*args))
me = os.getpid()
out = {}
"""


async def probe(runtime_dir, body: str, limits: RunLimits = LIMITS) -> dict:
    events = await run_unrestricted(runtime_dir, SYSCALLS + body + "emit_result(out)\n", limits)
    results = of_type(events, "result")
    assert results, events
    return results[0].data


async def test_usr_holds_only_the_interpreter_and_what_it_loads(runtime_dir):
    script = (
        "import os\n"
        "emit_result({'bin': sorted(os.listdir('/usr/bin')),\n"
        "             'share': os.path.exists('/usr/share'),\n"
        "             'dist': os.path.exists('/usr/lib/python3/dist-packages'),\n"
        "             'local': os.path.exists('/usr/local'),\n"
        "             'apt': os.path.exists('/usr/bin/apt') or os.path.exists('/bin/apt'),\n"
        "             'docker': os.path.exists('/usr/bin/docker'),\n"
        "             'etc': os.path.exists('/etc/passwd')})\n"
    )
    events = await run_unrestricted(runtime_dir, script, LIMITS)
    seen = of_type(events, "result")[0].data
    assert os.path.exists("/usr/bin/apt")  # the host has it: its absence inside means something
    assert set(seen["bin"]) <= {"python3", "python3.11", "python3.12", "python3.13"}
    assert seen == {**seen, "share": False, "dist": False, "local": False, "apt": False,
                    "docker": False, "etc": False}  # fmt: skip


async def test_the_stdlib_and_its_extension_modules_still_load(runtime_dir):
    script = (
        "import ctypes, sqlite3, ssl, hashlib, zlib, lzma, bz2, decimal, json, uuid\n"
        "ctypes.CDLL(None)\n"
        "emit_result([sqlite3.connect(':memory:').execute('select 1').fetchone()[0],\n"
        "             hashlib.sha256(b'').hexdigest()[:8], len(zlib.compress(b'x'))])\n"
    )
    events = await run_unrestricted(runtime_dir, script, LIMITS)
    assert of_type(events, "result")[0].data == [1, "e3b0c442", 9]


async def test_usr_and_the_runtime_are_read_only(runtime_dir):
    script = (
        "out = []\n"
        "for path in ('/usr/bin/python3', '/usr/lib/python3.11/os.py', '/opt/jazzmine/x'):\n"
        "    try:\n        open(path, 'a')\n        out.append('written')\n"
        "    except OSError as e:\n        out.append(type(e).__name__)\n"
        "emit_result(out)\n"
    )
    events = await run_unrestricted(runtime_dir, script, LIMITS)
    assert "written" not in of_type(events, "result")[0].data


async def test_only_tmp_and_a_small_dev_shm_can_be_written(runtime_dir):
    # bwrap builds the root on a tmpfs of its own; left writable, it (and /dev, and an unsized
    # /dev/shm) took files the run's tmpfs size never counted.
    script = (
        "import os\nout = {}\n"
        "for path in ('/x', '/usr/../x', '/opt/x', '/proc/../x', '/dev/x', '/dev/pts/../x',\n"
        "             '/dev/shm/x', '/tmp/x'):\n"
        "    try:\n        open(path, 'w').close()\n        out[path] = 'written'\n"
        "    except OSError as e:\n        out[path] = type(e).__name__\n"
        "for path in ('/newdir', '/dev/newdir'):\n"
        "    try:\n        os.mkdir(path)\n        out[path] = 'written'\n"
        "    except OSError as e:\n        out[path] = type(e).__name__\n"
        "try:\n    os.symlink('/tmp', '/link')\n    out['/link'] = 'written'\n"
        "except OSError as e:\n    out['/link'] = type(e).__name__\n"
        "big = b'x' * (1024 * 1024)\n"
        "written = 0\n"
        "try:\n"
        "    with open('/dev/shm/fill', 'wb') as f:\n"
        "        for _ in range(200):\n            f.write(big)\n            f.flush()\n"
        "            written += 1\n"
        "except OSError as e:\n    out['fill'] = type(e).__name__\n"
        "out['shm_mb'] = written\n"
        "with open('/dev/null', 'w') as f:\n    f.write('still a sink')\n"
        "emit_result(out)\n"
    )
    limits = RunLimits(memory_mb=512, pids_limit=32, timeout_seconds=15, tmpfs_mb=16)
    events = await run_unrestricted(runtime_dir, script, limits)
    assert final(events).outcome is Outcome.RESULT, events
    out = of_type(events, "result")[0].data
    outside = {k: v for k, v in out.items() if k not in ("/tmp/x", "/dev/shm/x", "fill", "shm_mb")}
    assert outside == dict.fromkeys(outside, "OSError") and len(outside) == 9, out
    assert out["/tmp/x"] == out["/dev/shm/x"] == "written"
    assert out["fill"] == "OSError" and out["shm_mb"] <= 16, out  # sized like the run's tmpfs


async def test_ptrace_unshare_mount_and_setns_fail_with_eperm(runtime_dir):
    out = await probe(
        runtime_dir,
        "out['ptrace'] = call(libc.ptrace, 0, 0, None, None)\n"  # PTRACE_TRACEME
        "out['unshare_user'] = call(libc.unshare, 0x10000000)\n"
        "out['unshare_net'] = call(libc.unshare, 0x40000000)\n"
        "out['unshare_mount'] = call(libc.unshare, 0x00020000)\n"
        "out['mount'] = call(libc.mount, b'none', b'/tmp', b'tmpfs', 0, None)\n"
        "out['umount'] = call(libc.umount2, b'/tmp', 2)\n"
        "out['setns'] = call(libc.setns, os.open('/proc/self/ns/net', os.O_RDONLY), 0)\n"
        "out['chroot'] = call(libc.chroot, b'/tmp')\n",
    )
    assert out == dict.fromkeys(out, "EPERM") and len(out) == 8


async def test_sockets_other_than_local_pairs_fail_with_eperm(runtime_dir):
    out = await probe(
        runtime_dir,
        "for name, family, kind in [('inet', 2, 1), ('inet6', 10, 1), ('udp', 2, 2),\n"
        "                           ('netlink', 16, 3), ('packet', 17, 3)]:\n"
        "    try:\n        socket.socket(family, kind).close()\n        out[name] = 'ok'\n"
        "    except OSError as e:\n        out[name] = errno.errorcode[e.errno]\n"
        "a, b = socket.socketpair()\na.send(b'x')\nout['pair'] = b.recv(1).decode()\n",
    )
    expected = dict.fromkeys(["inet", "inet6", "udp", "netlink", "packet"], "EPERM")
    assert out == {**expected, "pair": "x"}


async def test_a_sandbox_with_network_is_refused_not_given_the_hosts(runtime_dir):
    # bwrap's only network is the host's own: its loopback Redis and PostgreSQL answered.
    limits = RunLimits(memory_mb=256, pids_limit=32, timeout_seconds=15, network=True)
    events = await run_unrestricted(runtime_dir, "emit_result(1)\n", limits)
    assert final(events).outcome is Outcome.ENGINE_UNAVAILABLE, events
    assert "use the Docker backend" in final(events).data["message"]
    assert not of_type(events, "result")


async def test_the_workers_environment_is_nowhere_in_the_sandbox(runtime_dir, monkeypatch):
    # bwrap's own process stays in the sandbox as pid 1 with the environment it was started
    # with; `--clearenv` cleans only what it runs.
    marker = "worker-secret-3f9a1c"
    monkeypatch.setenv("JAZZMINE_SECRETS_KEY", marker)
    script = (
        "import os\nfound = []\n"
        "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
        "    for name in ('environ', 'cmdline'):\n"
        "        try:\n            found.append(open(f'/proc/{pid}/{name}', 'rb').read().decode())\n"
        "        except OSError:\n            pass\n"
        "emit_result({'read': len(found), 'text': '\\n'.join(found)})\n"
    )
    events = await run_unrestricted(runtime_dir, script, LIMITS)
    seen = of_type(events, "result")[0].data
    assert seen["read"] >= 2  # it did read processes' environments (its own, pid 1's)
    assert marker not in seen["text"]
    assert "JAZZMINE_SECRETS_KEY" not in seen["text"]


@pytest.mark.skipif(platform.machine() != "x86_64", reason="raw syscall numbers of x86_64")
async def test_namespace_clones_and_kernel_interfaces_fail_with_eperm(runtime_dir):
    out = await probe(
        runtime_dir,
        # clone(CLONE_NEWUSER | SIGCHLD), clone(CLONE_NEWNET | SIGCHLD): unshare by other means
        "out['clone_user'] = call(libc.syscall, 56, 0x10000000 | 17, 0, 0, 0, 0)\n"
        "out['clone_net'] = call(libc.syscall, 56, 0x40000000 | 17, 0, 0, 0, 0)\n"
        "out['keyctl'] = call(libc.syscall, 250, 0, 0, 0, 0, 0)\n"
        "out['bpf'] = call(libc.syscall, 321, 0, 0, 0)\n"
        "out['perf_event_open'] = call(libc.syscall, 298, 0, 0, -1, -1, 0)\n"
        "out['userfaultfd'] = call(libc.syscall, 323, 0)\n"
        "out['kexec_load'] = call(libc.syscall, 246, 0, 0, 0, 0)\n"
        "out['init_module'] = call(libc.syscall, 175, 0, 0, 0)\n"
        "out['io_uring_setup'] = call(libc.syscall, 425, 1, 0)\n"
        "out['process_vm_readv'] = call(libc.syscall, 310, 1, 0, 0, 0, 0, 0)\n"
        "out['no_aslr'] = call(libc.personality, 0x0040000)\n"
        "out['tiocsti'] = call(libc.ioctl, 0, 0x5412, ctypes.c_char_p(b'x'))\n",
    )
    assert out == dict.fromkeys(out, "EPERM") and len(out) == 12


async def test_syscalls_newer_than_the_filter_answer_enosys_as_on_an_older_kernel(runtime_dir):
    # Numbers shared by every architecture: the filter denies by name what it knows, and
    # reads none of these (statmount/listmount reach mount data; open_tree_attr a tree).
    out = await probe(
        runtime_dir,
        "out['cachestat'] = call(libc.syscall, 451, 0, 0, 0, 0)\n"
        "out['fchmodat2'] = call(libc.syscall, 452, -100, ctypes.c_char_p(b'/tmp'), 0o700, 0)\n"
        "out['statmount'] = call(libc.syscall, 457, 0, 0, 0, 0)\n"
        "out['listmount'] = call(libc.syscall, 458, 0, 0, 0, 0)\n"
        "out['mseal'] = call(libc.syscall, 462, 0, 0, 0)\n"
        "out['open_tree_attr'] = call(libc.syscall, 467, -100, 0, 0, 0, 0)\n"
        "out['unnumbered_yet'] = call(libc.syscall, 505, 0)\n"
        # Calls below the line still work: faccessat2 (439) answers for /tmp as the kernel says.
        "out['faccessat2'] = call(libc.syscall, 439, -100, ctypes.c_char_p(b'/tmp'), 0, 0)\n",
    )
    assert out == {**dict.fromkeys(out, "ENOSYS"), "faccessat2": "ok"}


async def test_ordinary_forks_and_threads_still_work(runtime_dir):
    script = (
        "import os, threading\nresult = []\n"
        "thread = threading.Thread(target=lambda: result.append('thread'))\n"
        "thread.start()\nthread.join()\n"
        "pid = os.fork()\nif pid == 0:\n    os._exit(7)\n"
        "result.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n"
        "emit_result(result)\n"
    )
    events = await run_unrestricted(runtime_dir, script, LIMITS)
    assert final(events).outcome is Outcome.RESULT
    assert of_type(events, "result")[0].data == ["thread", 7]
