"""The filesystem a sandbox sees: a minimal read-only /usr, only what the interpreter loads."""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

from .availability import BwrapUnavailable

# Libraries manylinux wheels may expect from the system (beyond what Python itself loads).
WHEEL_SYSTEM_LIBS = ("libstdc++.so.6", "libgcc_s.so.1", "libpthread.so.0", "libdl.so.2",
                     "librt.so.1", "libutil.so.1")  # fmt: skip


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
