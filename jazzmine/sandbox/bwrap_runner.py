"""The bubblewrap backend, for machines without Docker: same harness, same request protocol.

Walls: every namespace unshared (so no network), a minimal /usr (the interpreter, its stdlib
and the shared libraries they load, read-only), the runtime directory bound read-only, a
private /tmp, no environment but what we set, a seccomp filter, and the process dies with its
parent. Memory, CPU and pids are limited for the whole run by a cgroup of its own (see
`cgroups`); when that cgroup cannot be made the run does not start. When started as root, the
sandbox drops to nobody first.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from .cgroups import CgroupUnavailable, RunCgroup, create_run_cgroup
from .errors import SandboxError, UnrestrictedRefused
from .events import Event
from .harness import UNRESTRICTED_ENV
from .request import RunLimits, RunRequest
from .session import ExitInfo, drive, engine_unavailable
from .streams import Stream

if TYPE_CHECKING:
    from .builder import SandboxBuilder

SANDBOX_UID = 65534
RUNTIME_MOUNT = "/opt/jazzmine"
RUN_DIR_PREFIX = "jazzmine-bwrap-"
# A per-run directory this old outlived any run (deployment maxima are minutes, not a day).
STALE_RUN_DIR_SECONDS = 24 * 3600
# bwrap itself: the outer process that waits and the inner one that is pid 1 of the sandbox.
BWRAP_PIDS = 2
OOM_POLL_SECONDS = 0.05
# Exit code of the launcher when the process cannot join its cgroup (it then never runs).
CGROUP_JOIN_FAILED = 125
# Writes its own pid to each cgroup.procs file given before "--", then runs what follows.
JOIN_CGROUP_SCRIPT = (
    f'while [ "$1" != -- ]; do echo $$ > "$1" || exit {CGROUP_JOIN_FAILED}; shift; done; '
    'shift; exec "$@"'
)

# Syscalls no script needs that widen the kernel's surface or reach out of the sandbox: they
# fail with EPERM. Names this architecture does not have are skipped.
DENIED_SYSCALLS = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr",
    "unshare", "setns",
    "keyctl", "add_key", "request_key",
    "bpf", "perf_event_open", "userfaultfd", "fanotify_init",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "vhangup",
    "open_by_handle_at", "name_to_handle_at",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "iopl", "ioperm", "uselib", "lookup_dcookie", "nfsservctl", "_sysctl", "sysfs", "ustat",
)  # fmt: skip
# clone() with any of these flags makes namespaces, as unshare() would.
CLONE_NAMESPACE_FLAGS = (
    0x00020000,
    0x02000000,
    0x04000000,
    0x08000000,
    0x10000000,
    0x20000000,
    0x40000000,
)  # fmt: skip  CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
# personality() bits that turn off ASLR or make data executable.
PERSONALITY_TRICKS = (0x0040000, 0x0200000, 0x0400000, 0x0100000)
# ioctls that push input into, or reconfigure, a terminal outside the sandbox.
TERMINAL_IOCTLS = (0x5412, 0x541C)  # TIOCSTI, TIOCLINUX
# Libraries manylinux wheels may expect from the system (beyond what Python itself loads).
WHEEL_SYSTEM_LIBS = ("libstdc++.so.6", "libgcc_s.so.1", "libpthread.so.0", "libdl.so.2",
                     "librt.so.1", "libutil.so.1")  # fmt: skip


class BwrapUnavailable(SandboxError):
    """A piece of the bubblewrap sandbox (seccomp, /usr layout) cannot be built here."""


def bwrap_available() -> tuple[bool, str]:
    """Tell whether bubblewrap can create its namespaces here, and why not."""
    if shutil.which("bwrap") is None:
        return False, "bwrap is not installed (apt-get install bubblewrap)"
    probe = subprocess.run(
        ["bwrap", "--unshare-all", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
         "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--", "/bin/true"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if probe.returncode != 0:
        return False, f"bwrap cannot create namespaces here: {probe.stderr.strip()}"
    return True, "ok"


@functools.lru_cache(maxsize=4)
def seccomp_program(*, network: bool) -> bytes:
    """Compile the seccomp filter of a sandbox (BPF, as bwrap's --seccomp reads it)."""
    try:
        import pyseccomp as seccomp
    except (ImportError, RuntimeError, OSError) as exc:
        message = f"cannot build the seccomp filter (pyseccomp/libseccomp): {exc}"
        raise BwrapUnavailable(message) from exc
    deny = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            rules.add_rule(deny, name)
        except (ValueError, OSError):
            continue  # not a syscall on this architecture
    for flag in CLONE_NAMESPACE_FLAGS:
        rules.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    # clone3 takes its flags in memory where a filter cannot read them: make the C library
    # fall back to clone(), which the rules above can check.
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for bit in PERSONALITY_TRICKS:
        rules.add_rule(deny, "personality", seccomp.Arg(0, seccomp.MASKED_EQ, bit, bit))
    for request in TERMINAL_IOCTLS:
        rules.add_rule(deny, "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, request))
    if not network:
        # Only local socket pairs (asyncio, multiprocessing); no IP, netlink or packet sockets.
        rules.add_rule(deny, "socket", seccomp.Arg(0, seccomp.NE, socket.AF_UNIX))
    fd = os.memfd_create("jazzmine-seccomp")
    with open(fd, "w+b") as program:
        rules.export_bpf(program)
        program.seek(0)
        return program.read()


@functools.lru_cache(maxsize=4)
def minimal_usr(python: str) -> tuple[str, ...]:
    """Return the bwrap arguments that show only what `python` needs, read-only.

    That is the interpreter, its standard library and the shared libraries it and its
    extension modules load (plus the few system libraries wheels may link), each at its own
    path, with the host's /bin, /lib... symlinks and the symlinks leading to each file.
    """
    probe = subprocess.run(
        [python, "-I", "-c", "import sys, sysconfig; print(sys.executable); "
         "print(sysconfig.get_paths()['stdlib']); print(sysconfig.get_config_var('DESTSHARED'))"],
        capture_output=True, text=True, check=False, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    if probe.returncode != 0:
        raise BwrapUnavailable(f"cannot inspect {python}: {probe.stderr.strip()}")
    executable, stdlib, dynload = probe.stdout.splitlines()[:3]
    binaries = [Path(os.path.realpath(executable))]
    binaries += sorted(Path(dynload).glob("*.so")) if os.path.isdir(dynload) else []
    libraries = _shared_libraries(binaries)
    libc_dir = next((lib.parent for lib in libraries if lib.name.startswith("libc.so")), None)
    if libc_dir is not None:
        libraries += [libc_dir / name for name in WHEEL_SYSTEM_LIBS if (libc_dir / name).exists()]
    args: list[str] = []
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        if os.path.islink(f"/{top}"):  # merged /usr: keep /lib -> usr/lib and friends
            args += ["--symlink", os.readlink(f"/{top}"), f"/{top}"]
    args += ["--ro-bind", os.path.realpath(stdlib), os.path.realpath(stdlib)]
    for path in [Path(python), Path(executable), *libraries]:
        args += _mirror(path)
    return _dedupe(args)


def _shared_libraries(binaries: Iterable[Path]) -> list[Path]:
    """Return every shared library the binaries load, as ldd resolves them."""
    found: dict[Path, None] = {}
    for binary in binaries:
        output = subprocess.run(
            ["ldd", str(binary)], capture_output=True, text=True, check=False
        ).stdout
        for line in output.splitlines():
            for word in line.split():
                if word.startswith("/"):
                    found[Path(word)] = None
    return list(found)


def _mirror(path: Path) -> list[str]:
    """Return bwrap arguments that make `path` resolve inside the sandbox as on the host."""
    args: list[str] = []
    seen: set[str] = set()
    current = str(path)
    while current not in seen:
        seen.add(current)
        # Directories are resolved (the top-level symlinks cover /lib...); the file is not.
        located = os.path.join(
            os.path.realpath(os.path.dirname(current)), os.path.basename(current)
        )
        if not os.path.islink(located):
            args += ["--ro-bind", located, located]
            break
        target = os.readlink(located)
        args += ["--symlink", target, located]
        current = os.path.join(os.path.dirname(located), target)
    return args


def _dedupe(args: list[str]) -> tuple[str, ...]:
    """Keep the first of the (option, source, destination) triples naming each destination."""
    destinations: set[str] = set()
    out: list[str] = []
    for i in range(0, len(args), 3):
        if args[i + 2] not in destinations:
            destinations.add(args[i + 2])
            out += args[i : i + 3]
    return tuple(out)


def stage_run_dir(builder: SandboxBuilder, sandbox_name: str) -> Path:
    """Stage a sandbox's runtime into a new per-run directory; remove it if staging fails.

    Bind it with `BwrapRunner.bind(..., remove_runtime_dir=True)`: the run removes it.
    Directories far older than any run can last were left by a worker that died: removed here.
    """
    runtime_dir = Path(tempfile.mkdtemp(prefix=RUN_DIR_PREFIX))
    for stale in runtime_dir.parent.glob(f"{RUN_DIR_PREFIX}*"):
        with contextlib.suppress(OSError):
            if time.time() - stale.stat().st_mtime > STALE_RUN_DIR_SECONDS:
                shutil.rmtree(stale, ignore_errors=True)
    try:
        runtime_dir.chmod(0o755)  # the sandbox user (nobody) must read it
        builder.stage(sandbox_name, runtime_dir)
    except BaseException:
        shutil.rmtree(runtime_dir, ignore_errors=True)
        raise
    return runtime_dir


class BwrapProcess:
    """One bubblewrap sandbox running the harness, ready for exactly one request."""

    backend = "bwrap"

    def __init__(self, process: asyncio.subprocess.Process, cgroup: RunCgroup) -> None:
        self.process = process
        self.cgroup = cgroup
        self._chunks: asyncio.Queue[tuple[Stream, bytes] | None] = asyncio.Queue()
        self._open = 2
        self.early: deque[tuple[Stream, bytes]] = deque()
        self.start_errors: list[bytes] = []
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._pump("stdout", process.stdout)),
            loop.create_task(self._pump("stderr", process.stderr)),
            loop.create_task(self._watch_memory()),
        ]

    async def _pump(self, stream: Stream, reader: asyncio.StreamReader | None) -> None:
        assert reader is not None
        while chunk := await reader.read(65536):
            await self._chunks.put((stream, chunk))
        await self._chunks.put(None)

    async def _watch_memory(self) -> None:
        """Kill the whole run as soon as it is out of memory (v1 tasks wait rather than die)."""
        while not self.cgroup.out_of_memory():
            await asyncio.sleep(OOM_POLL_SECONDS)
        self._kill_now()

    async def read(self) -> tuple[Stream, bytes] | None:
        """Return the next output chunk, or None once both pipes are closed."""
        if self.early:
            return self.early.popleft()
        while self._open:
            item = await self._chunks.get()
            if item is not None:
                return item
            self._open -= 1
        return None

    async def write(self, data: bytes) -> None:
        """Send bytes to the harness's stdin."""
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    def _kill_now(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        # The sandbox starts its own session inside, out of our process group: the cgroup
        # holds every process of the run whatever it did.
        self.cgroup.kill()

    async def kill(self) -> None:
        """Kill every process of the sandbox."""
        self._kill_now()

    async def wait(self) -> ExitInfo:
        """Wait for the sandbox to end; a negative code is the killing signal."""
        code = await self.process.wait()
        return ExitInfo(exit_code=code, oom_killed=self.cgroup.out_of_memory())

    async def remove(self) -> None:
        """Make sure nothing of the sandbox survives the run, its cgroup included."""
        self._kill_now()
        try:
            with contextlib.suppress(ProcessLookupError, TimeoutError):
                await asyncio.wait_for(self.process.wait(), 5)
        finally:
            for task in self._tasks:
                task.cancel()
            self.cgroup.remove()


class BwrapRunner:
    """Run scripts under bubblewrap from a staged runtime directory (see `stage_run_dir`)."""

    backend = "bwrap"

    def __init__(
        self, *, python: str = "/usr/bin/python3", allow_unrestricted: bool = False
    ) -> None:
        self.python = python
        self.allow_unrestricted = allow_unrestricted

    def command(
        self, runtime_dir: Path, limits: RunLimits, *, cgroup: RunCgroup, seccomp_fd: int
    ) -> list[str]:
        """Return the full command line of one sandbox."""
        # The launcher joins the run's cgroup before anything else runs, so every process the
        # sandbox ever makes is inside it; if it cannot join, it stops before bwrap starts.
        command = [
            "/bin/sh", "-c",
            JOIN_CGROUP_SCRIPT,
            "jazzmine-join", *(str(f) for f in cgroup.procs_files), "--",
        ]  # fmt: skip
        command += [
            "prlimit", "--nofile=256", f"--fsize={limits.tmpfs_mb * 1024 * 1024}", "--core=0",
            "--",
        ]  # fmt: skip
        if os.geteuid() == 0:
            command += ["setpriv", f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}",
                        "--clear-groups", "--"]  # fmt: skip
        command += [
            "bwrap", "--unshare-all", "--die-with-parent", "--new-session",
            *minimal_usr(self.python),
            "--proc", "/proc", "--dev", "/dev",
            "--size", str(limits.tmpfs_mb * 1024 * 1024), "--tmpfs", "/tmp",
            "--ro-bind", str(runtime_dir), RUNTIME_MOUNT,
            "--clearenv", "--setenv", "PATH", "/usr/bin", "--setenv", "HOME", "/tmp",
            "--setenv", "LANG", "C.UTF-8", "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
            "--chdir", "/tmp", "--hostname", "sandbox",
            "--seccomp", str(seccomp_fd),
        ]  # fmt: skip
        if limits.network:
            command.append("--share-net")
        if self.allow_unrestricted:
            command += ["--setenv", UNRESTRICTED_ENV, "1"]
        command += ["--", self.python, "-I", f"{RUNTIME_MOUNT}/harness.py", RUNTIME_MOUNT]
        return command

    async def start_process(self, runtime_dir: Path, limits: RunLimits) -> BwrapProcess:
        """Start one sandbox in a cgroup of its own and wait until its harness is ready."""
        program = seccomp_program(network=limits.network)
        cgroup = create_run_cgroup(
            memory_mb=limits.memory_mb, cpus=limits.cpus, pids_limit=limits.pids_limit + BWRAP_PIDS
        )
        seccomp_fd = os.memfd_create("jazzmine-seccomp", 0)  # not CLOEXEC: bwrap reads it
        try:
            os.write(seccomp_fd, program)
            os.lseek(seccomp_fd, 0, os.SEEK_SET)
            process = await asyncio.create_subprocess_exec(
                *self.command(runtime_dir, limits, cgroup=cgroup, seccomp_fd=seccomp_fd),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                pass_fds=(seccomp_fd,),
            )
        except BaseException:
            cgroup.remove()
            raise
        finally:
            os.close(seccomp_fd)
        sandbox = BwrapProcess(process, cgroup)
        ready = await _await_ready(sandbox)
        if not ready:
            await sandbox.remove()
            detail = b"".join(sandbox.start_errors).decode(errors="replace").strip()
            if process.returncode == CGROUP_JOIN_FAILED:
                raise CgroupUnavailable(f"the sandbox could not join its cgroup: {detail}")
            raise RuntimeError(f"the bwrap sandbox exited before its harness was ready: {detail}")
        return sandbox

    def check(self, request: RunRequest) -> None:
        """Refuse what this runner may not run."""
        if request.unrestricted and not self.allow_unrestricted:
            raise UnrestrictedRefused(
                "unrestricted runs need a runner with allow_unrestricted=True"
            )

    def bind(
        self, runtime_dir: Path, limits: RunLimits, *, remove_runtime_dir: bool = False
    ) -> BwrapOneShot:
        """Return the runner of one runtime directory and limits: a new sandbox per request.

        With `remove_runtime_dir` the runner owns its (per-run) directory and removes it
        however its run ends: result, error, timeout, kill or the caller walking away.
        """
        return BwrapOneShot(self, runtime_dir, limits, remove_runtime_dir=remove_runtime_dir)


class BwrapOneShot:
    """A `Runner` that starts a new bubblewrap sandbox from one runtime directory per request."""

    backend = "bwrap"

    def __init__(
        self,
        runner: BwrapRunner,
        runtime_dir: Path,
        limits: RunLimits,
        *,
        remove_runtime_dir: bool = False,
    ) -> None:
        self.runner = runner
        self.runtime_dir = runtime_dir
        self.limits = limits
        self.remove_runtime_dir = remove_runtime_dir

    async def run(self, request: RunRequest) -> AsyncIterator[Event]:
        """Run one request in a new bubblewrap sandbox and yield its events as they arrive."""
        try:
            self.runner.check(request)
            try:
                sandbox = await self.runner.start_process(self.runtime_dir, self.limits)
            except (OSError, RuntimeError, SandboxError) as exc:
                for event in engine_unavailable(self.backend, f"bubblewrap sandbox failed: {exc}"):
                    yield event
                return
            try:
                async for event in drive(sandbox, request, self.limits):
                    yield event
            finally:
                await sandbox.remove()
        finally:
            if self.remove_runtime_dir:
                shutil.rmtree(self.runtime_dir, ignore_errors=True)


async def _await_ready(sandbox: BwrapProcess) -> bool:
    """Consume output until the ready line; put back whatever follows it."""
    pending = b""
    while True:
        item = await sandbox.read()
        if item is None:
            return False
        stream, chunk = item
        if stream == "stderr":
            sandbox.start_errors.append(chunk)  # kept to explain a failed start
            continue
        pending += chunk
        if b"\n" in pending:
            _line, rest = pending.split(b"\n", 1)
            if rest:
                sandbox.early.append(("stdout", rest))
            return True
