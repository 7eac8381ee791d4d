"""One cgroup per bubblewrap run: memory, CPU and pids limits for all its processes together.

rlimits bind one process at a time (six children each under the limit hold six times the
memory), so the bwrap backend puts every process of a run in a cgroup of its own. Both layouts
are supported: cgroup v1 (one hierarchy per controller, as on this machine) and cgroup v2 (one
unified hierarchy, which needs the worker's cgroup delegated to it). A run's cgroup is made
under the worker's own cgroup, so the limits of whatever runs the worker still apply on top.
Anything that goes wrong here raises `CgroupUnavailable`: a run never starts without limits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .errors import SandboxError

CONTROLLERS = ("memory", "cpu", "pids")
PARENT_NAME = "jazzmine"
CPU_PERIOD_US = 100_000
# An empty run cgroup older than this was left by a worker that died mid-run: safe to remove.
STALE_AFTER_SECONDS = 600
PROC_MOUNTS = Path("/proc/self/mounts")
PROC_CGROUP = Path("/proc/self/cgroup")


class CgroupUnavailable(SandboxError):
    """A run's cgroup could not be made or limited: the run must not start."""


@dataclass
class RunCgroup:
    """The cgroup directories of one run (one per controller on v1, a single one on v2)."""

    version: int
    dirs: dict[str, Path]
    oom_seen: bool = field(default=False)

    @property
    def procs_files(self) -> list[Path]:
        """Return the `cgroup.procs` files a process writes its pid to, to join the run."""
        return [path / "cgroup.procs" for path in dict.fromkeys(self.dirs.values())]

    def pids(self) -> list[int]:
        """Return the processes still in the run's cgroup."""
        pids: set[int] = set()
        for procs in self.procs_files:
            with contextlib.suppress(OSError):
                pids.update(int(line) for line in procs.read_text().split() if line.strip())
        pids.discard(0)  # a process outside our pid namespace reads as 0
        return sorted(pids)

    def out_of_memory(self) -> bool:
        """Tell whether the run hit its memory limit (v1: tasks wait; v2: the group is killed)."""
        memory = self.dirs["memory"]
        try:
            if self.version == 1:
                stats = _key_values(memory / "memory.oom_control")
                seen = stats.get("under_oom", 0) > 0 or stats.get("oom_kill", 0) > 0
            else:
                stats = _key_values(memory / "memory.events")
                seen = stats.get("oom_kill", 0) > 0 or stats.get("oom_group_kill", 0) > 0
        except OSError:
            return self.oom_seen
        self.oom_seen = self.oom_seen or seen
        return self.oom_seen

    def kill(self) -> None:
        """Send SIGKILL to every process of the run (tasks waiting on memory wake up to die)."""
        kill_file = self.dirs["pids"] / "cgroup.kill"
        if self.version == 2 and kill_file.exists():
            with contextlib.suppress(OSError):
                kill_file.write_text("1")
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def remove(self, *, timeout: float = 5.0) -> None:
        """Kill what is left and remove the run's directories; retries while they empty."""
        deadline = time.monotonic() + timeout
        for path in dict.fromkeys(self.dirs.values()):
            while True:
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    # EBUSY: processes (or zombies being reaped) are still inside.
                    if time.monotonic() > deadline:
                        raise
                    self.kill()
                    time.sleep(0.01)


def create_run_cgroup(*, memory_mb: int, cpus: float, pids_limit: int) -> RunCgroup:
    """Make and limit a new cgroup for one run, or raise CgroupUnavailable saying why."""
    name = f"run-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    v1 = _v1_bases()
    if v1 is not None:
        cgroup = RunCgroup(1, {c: base / PARENT_NAME / name for c, base in v1.items()})
    else:
        base = _v2_base()
        cgroup = RunCgroup(2, dict.fromkeys(CONTROLLERS, base / PARENT_NAME / name))
    try:
        for path in dict.fromkeys(cgroup.dirs.values()):
            _prepare_parent(path.parent, cgroup.version)
            path.mkdir()
        _apply_limits(cgroup, memory_mb=memory_mb, cpus=cpus, pids_limit=pids_limit)
    except OSError as exc:
        with contextlib.suppress(OSError):
            cgroup.remove(timeout=0)
        raise CgroupUnavailable(
            f"cannot create the run's cgroup v{cgroup.version} ({exc}); the bubblewrap backend "
            "needs root or a delegated cgroup and does not run without memory, CPU and pids "
            "limits"
        ) from exc
    return cgroup


def _apply_limits(cgroup: RunCgroup, *, memory_mb: int, cpus: float, pids_limit: int) -> None:
    memory = str(memory_mb * 1024 * 1024)
    quota = str(max(1000, round(cpus * CPU_PERIOD_US)))
    if cgroup.version == 1:
        mem = cgroup.dirs["memory"]
        (mem / "memory.limit_in_bytes").write_text(memory)
        swap = mem / "memory.memsw.limit_in_bytes"
        if swap.exists():  # only with swap accounting; keeps the limit from spilling into swap
            swap.write_text(memory)
        # Tasks that hit the limit wait instead of one being killed at random; the runner sees
        # under_oom and kills the whole run, so a run ends as memory_killed, never half-killed.
        (mem / "memory.oom_control").write_text("1")
        (cgroup.dirs["cpu"] / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
        (cgroup.dirs["cpu"] / "cpu.cfs_quota_us").write_text(quota)
    else:
        path = cgroup.dirs["memory"]
        (path / "memory.max").write_text(memory)
        with contextlib.suppress(FileNotFoundError):  # no swap controller: nothing to spill to
            (path / "memory.swap.max").write_text("0")
        (path / "memory.oom.group").write_text("1")  # the kernel kills the whole run at once
        (path / "cpu.max").write_text(f"{quota} {CPU_PERIOD_US}")
    (cgroup.dirs["pids"] / "pids.max").write_text(str(pids_limit))


def _prepare_parent(parent: Path, version: int) -> None:
    """Make the shared `jazzmine` cgroup once and clear run cgroups a dead worker left."""
    if not parent.exists():
        if version == 2:
            _enable_controllers(parent.parent)
        with contextlib.suppress(FileExistsError):
            parent.mkdir()
    if version == 2:
        _enable_controllers(parent)
    now = time.time()
    for stale in parent.glob("run-*"):
        with contextlib.suppress(OSError):
            if now - stale.stat().st_mtime > STALE_AFTER_SECONDS:
                stale.rmdir()  # refused (EBUSY) while anything still runs in it


def _enable_controllers(path: Path) -> None:
    control = path / "cgroup.subtree_control"
    enabled = control.read_text().split()
    missing = [c for c in CONTROLLERS if c not in enabled]
    if missing:
        # Fails (EBUSY) when the worker's own cgroup has processes: v2 wants it delegated.
        control.write_text(" ".join(f"+{c}" for c in missing))


def _v1_bases() -> dict[str, Path] | None:
    """Return where the worker sits in each v1 controller hierarchy, or None if any is absent."""
    mounts: dict[str, Path] = {}
    for line in PROC_MOUNTS.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2] == "cgroup":
            for option in parts[3].split(","):
                if option in CONTROLLERS:
                    mounts[option] = Path(parts[1])
    if set(mounts) != set(CONTROLLERS):
        return None
    own: dict[str, str] = {}
    for line in PROC_CGROUP.read_text().splitlines():
        _id, names, path = line.split(":", 2)
        for name in names.split(","):
            own[name] = path
    return {c: mounts[c] / own.get(c, "/").lstrip("/") for c in CONTROLLERS}


def _v2_base() -> Path:
    """Return the worker's own cgroup in the unified hierarchy, if it offers every controller."""
    mount = next(
        (
            Path(parts[1])
            for parts in (line.split() for line in PROC_MOUNTS.read_text().splitlines())
            if len(parts) >= 3 and parts[2] == "cgroup2"
        ),
        None,
    )
    if mount is None:
        raise CgroupUnavailable("no cgroup hierarchy offers memory, cpu and pids controllers")
    own = next(
        (line[3:] for line in PROC_CGROUP.read_text().splitlines() if line.startswith("0::")),
        "/",
    )
    base = mount / own.lstrip("/")
    try:
        available = (base / "cgroup.controllers").read_text().split()
    except OSError as exc:
        raise CgroupUnavailable(f"cannot read the cgroup v2 controllers at {base}: {exc}") from exc
    missing = [c for c in CONTROLLERS if c not in available]
    if missing:
        raise CgroupUnavailable(
            f"cgroup v2 at {base} does not offer {', '.join(missing)}; delegate them to the worker"
        )
    return base


def _key_values(path: Path) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition(" ")
        with contextlib.suppress(ValueError):
            values[key] = int(value)
    return values


def run_cgroup_dirs(*, all_workers: bool = False) -> list[Path]:
    """Return the run cgroups of this worker process (or of every worker on this machine)."""
    v1 = _v1_bases()
    if v1 is not None:
        parents = list(dict.fromkeys(base / PARENT_NAME for base in v1.values()))
    else:
        try:
            parents = [_v2_base() / PARENT_NAME]
        except CgroupUnavailable:
            return []
    pattern = "run-*" if all_workers else f"run-{os.getpid()}-*"
    return sorted(path for parent in parents for path in parent.glob(pattern))
