"""Fetch a sandbox's dependencies as wheels on the host and unpack them into a site directory.

The image build never reaches a package registry: TLS from inside containers fails here and
air-gapped teams need the same path. `pip download` runs on the host with the host's pip
configuration (index, proxies, certificates, find-links), and wheels are cached per
requirement set and target. It reads only indexes: a dependency a package declares by URL
(`x @ http://10.0.0.5/x.whl`, `x @ file:///etc/...`) is refused before pip opens it
(`pip_guard`), and the build fails naming the package and the URL.

Compiled wheels are fine as long as they were built for the interpreter that runs them: pip is
asked for wheels matching the image's CPython, C library and machine (`WheelTarget`, read
from the image itself), and a wheel whose tags do not match is refused by name before
anything is unpacked. So is one that would unpack past the operator's limits (`wheel_limits`):
a wheel is a zip, and a small download can be a zip bomb.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import platform
import re
import shutil
import sys
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from ..interrupts import Interrupt
from ..requirements import RequirementError, requirements_check
from .commands import run_logged
from .errors import BuildError
from .pip_guard import GUARD_OPTION, guarded_env, url_refusal
from .wheel_limits import (
    SETTINGS,
    MiB,
    WheelLimits,
    WheelSize,
    WrittenBytes,
    amount,
    refused,
    sandbox_check,
    wheel_open,
    wheel_size,
)
from .workdirs import workdir_held

LogFn = Callable[[str], None]
_MISSING = re.compile(
    r"(?:No matching distribution found for|Could not find a version that satisfies the "
    r"requirement)\s+(\S+)"
)


# What pip says when a file it writes reaches the file size limit (EFBIG; Python ignores
# SIGXFSZ), and what it says before fetching each file, which names it.
_TOO_LARGE = re.compile(r"\[Errno 27\]|File too large")
_KILLED_BY_SIGXFSZ = 128 + 25  # as the tether reports a command killed by that signal
_FETCHED = re.compile(r"^(?:Downloading|Processing|Saved)\s+(\S+\.whl)", re.MULTILINE)


# Part of every cache key; changed whenever what a download may fetch narrows.
_DOWNLOAD_RULES = "no-url-dependencies"

# The manylinux policies older than PEP 600 names, as glibc versions.
_LEGACY_MANYLINUX = {"manylinux2014": (2, 17), "manylinux2010": (2, 12), "manylinux1": (2, 5)}


@dataclass(frozen=True)
class WheelTarget:
    """The interpreter a sandbox runs: CPython version, glibc version (None: not glibc), machine."""

    python: tuple[int, int]
    glibc: tuple[int, int] | None
    machine: str

    @classmethod
    def of_host(cls) -> WheelTarget:
        """Return the target of this interpreter (the bubblewrap backend runs it)."""
        libc, version = platform.libc_ver()
        glibc = tuple(int(p) for p in version.split(".")[:2]) if libc == "glibc" else None
        return cls(sys.version_info[:2], glibc, platform.machine())  # type: ignore[arg-type]

    @classmethod
    def parse(cls, text: str) -> WheelTarget:
        """Read `3.11 glibc 2.36 x86_64` (what `PROBE` prints inside an image)."""
        python, libc, version, machine = text.split()
        major, minor = (int(p) for p in python.split(".")[:2])
        glibc = tuple(int(p) for p in version.split(".")[:2]) if libc == "glibc" else None
        return cls((major, minor), glibc, machine)  # type: ignore[arg-type]

    @property
    def key(self) -> str:
        """Return a short name of the target, for caches and messages."""
        libc = f"glibc {self.glibc[0]}.{self.glibc[1]}" if self.glibc else "no glibc"
        return f"CPython {self.python[0]}.{self.python[1]} on {libc} {self.machine}"

    @cached_property
    def platforms(self) -> list[str]:
        """Return the platform tags this target runs, most specific first."""
        if self.glibc is None:
            return []
        major, minor = self.glibc
        tags = [f"manylinux_{major}_{m}_{self.machine}" for m in range(minor, 4, -1)]
        tags += [
            f"{name}_{self.machine}"
            for name, needs in _LEGACY_MANYLINUX.items()
            if needs <= self.glibc
        ]
        return tags

    @cached_property
    def tags(self) -> frozenset[Tag]:
        """Return every wheel tag this target can load."""
        major, minor = self.python
        cp = f"cp{major}{minor}"
        compiled = {Tag(cp, cp, p) for p in self.platforms}
        compiled |= {
            Tag(f"cp{major}{m}", "abi3", p) for m in range(2, minor + 1) for p in self.platforms
        }
        compiled |= {
            Tag(i, "none", p)
            for i in (cp, f"py{major}", f"py{major}{minor}")
            for p in self.platforms
        }
        pure = {Tag(i, "none", "any") for i in (cp, f"py{major}", f"py{major}{minor}")}
        pure |= {Tag(f"py{major}{m}", "none", "any") for m in range(0, minor)}
        return frozenset(compiled | pure)

    def pip_args(self) -> list[str]:
        """Return the `pip download` options that ask for wheels of this target."""
        major, minor = self.python
        args = ["--python-version", f"{major}.{minor}", "--implementation", "cp"]
        for abi in (f"cp{major}{minor}", "abi3", "none"):
            args += ["--abi", abi]
        for tag in self.platforms or ["any"]:
            args += ["--platform", tag]
        return args


# Printed by a sandbox's python3 to say what it is; parsed by WheelTarget.parse.
PROBE = (
    "import platform, sys; libc, version = platform.libc_ver(); "
    "print(f'{sys.version_info[0]}.{sys.version_info[1]}', libc or 'none', version or '0', "
    "platform.machine())"
)


def requirements_key(
    requirements: list[str], target: WheelTarget | None = None, indexes: PipIndexes | None = None
) -> str:
    """Return 16 hex chars naming a requirement set (order-insensitive) for a target and indexes.

    The indexes too: the same `foo==1.0` is another package on another index (a company's
    own next to PyPI), so wheels fetched from one are never reused for a build that reads
    another, whether the operator changed the index or two deployments share the cache.
    And the rules the download ran under: a set cached before pip refused dependencies given
    by URL may hold a file fetched from one, and is never reused.
    """
    where = indexes.pip_args() if indexes is not None else []
    parts = [sorted(requirements), target.key if target else "", where, _DOWNLOAD_RULES]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class PipIndexes:
    """Where pip looks for wheels: the operator's deployment settings, never a sandbox's text."""

    index_url: str = ""
    extra_index_urls: tuple[str, ...] = ()

    def pip_args(self) -> list[str]:
        """Return the `pip download` options naming the indexes (none: pip's own config)."""
        args = ["--index-url", self.index_url] if self.index_url else []
        for url in self.extra_index_urls:
            args += ["--extra-index-url", url]
        return args


def download_wheels(
    requirements: list[str],
    cache_dir: Path,
    log: LogFn,
    *,
    target: WheelTarget | None = None,
    indexes: PipIndexes | None = None,
    interrupt: Interrupt | None = None,
    limits: WheelLimits | None = None,
) -> Path:
    """Return a directory holding wheels for the requirements, downloading them once.

    A fired `interrupt` kills pip at once and leaves no partial download behind, and so
    does a download past the limits: no file pip writes may grow past a wheel's unpacked
    limit, nor the wheels together past a sandbox's (a wheel is compressed: its file is
    seldom larger than what it unpacks to).

    The requirements are checked again here, whatever the caller did: this is the last code
    before pip, and they reach pip only after `--`, so no string can become an option.
    """
    try:
        requirements = requirements_check(requirements)
    except RequirementError as exc:
        raise BuildError(
            step="download dependencies", package=exc.text, message=f"refused: {exc}"
        ) from None
    target = target or WheelTarget.of_host()
    indexes = indexes or PipIndexes()
    limits = limits or WheelLimits()
    dest = cache_dir / "wheels" / requirements_key(requirements, target, indexes)
    if (dest / ".complete").exists():
        log(f"wheels: reusing cached wheels for {', '.join(requirements)}")
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    # Removed on the way out unless kept: a stopped or failed download leaves no partial set.
    with workdir_held("download-", parent=dest.parent) as staging:
        _download(requirements, staging, log, target=target, indexes=indexes,
                  interrupt=interrupt, limits=limits)  # fmt: skip
        _downloaded_check(requirements, staging, limits)
        (staging / ".complete").write_text("\n".join(requirements) + "\n")
        if not dest.exists():  # else another build finished the same set meanwhile
            staging.rename(dest)
    return dest


def _download(
    requirements: list[str],
    staging: Path,
    log: LogFn,
    *,
    target: WheelTarget,
    indexes: PipIndexes,
    interrupt: Interrupt | None,
    limits: WheelLimits,
) -> None:
    """Download wheels into `staging` with pip; raise if pip fails or is stopped."""
    # pip has no size limit of its own: the kernel's file size limit (RLIMIT_FSIZE) stops
    # every file it writes (the wheel, its temporary copy, its cache) at a wheel's limit.
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        raise BuildError(
            step="download dependencies",
            message="prlimit (util-linux) is missing: a download cannot be capped, so none is made",
        )
    # GUARD_OPTION: pip refuses dependencies given by URL, or stops before it starts.
    command = [prlimit, f"--fsize={limits.wheel_bytes}", "--",
               sys.executable, "-m", "pip", "download", GUARD_OPTION, "--only-binary=:all:",
               "--dest", str(staging), "--progress-bar", "off", *target.pip_args(),
               *indexes.pip_args(), "--", *requirements]  # fmt: skip
    log(f"wheels: pip download {' '.join(requirements)} for {target.key}")
    output: list[str] = []

    def on_line(line: str) -> None:
        output.append(line)
        log(f"pip: {line}")

    # Run from the empty staging directory: pip reads a bare name like a file there first.
    returncode = run_logged(command, on_line, interrupt=interrupt, cwd=staging, env=guarded_env())
    if returncode != 0:
        text = "\n".join(output)
        refused = url_refusal(text, output[-15:])
        if refused is not None:
            raise refused
        if _TOO_LARGE.search(text) or returncode == _KILLED_BY_SIGXFSZ:
            fetched = _FETCHED.findall(text)
            name = fetched[-1].rsplit("/", 1)[-1] if fetched else ", ".join(requirements)
            raise BuildError(
                step="download dependencies",
                package=name,
                message=(
                    f"{name} is larger than {amount(limits.wheel_bytes)}, the limit of one "
                    f"wheel ({SETTINGS['wheel_bytes']}); nothing was kept"
                ),
                log_tail=output[-15:],
            )
        match = _MISSING.search(text)
        package = match.group(1) if match else ", ".join(requirements)
        raise BuildError(
            step="download dependencies",
            package=package,
            message=f"pip download failed for {package} (exit {returncode})",
            log_tail=output[-15:],
        )


def _downloaded_check(requirements: list[str], staging: Path, limits: WheelLimits) -> None:
    """Refuse a download whose wheels together are larger than a sandbox's unpacked limit.

    Each file was capped as it was written; this is their sum, before the set is cached.
    """
    sizes = {path.name: path.stat().st_size for path in staging.glob("*.whl")}
    total = sum(sizes.values())
    if total > limits.sandbox_bytes:
        largest = sorted(sizes, key=sizes.__getitem__, reverse=True)[:3]
        raise BuildError(
            step="download dependencies",
            package=largest[0],
            message=(
                f"the {len(sizes)} wheels of {', '.join(requirements)} download to "
                f"{amount(total)}, over the limit of {amount(limits.sandbox_bytes)} for all "
                f"of a sandbox's wheels ({SETTINGS['sandbox_bytes']}); the largest: "
                f"{', '.join(f'{n} ({sizes[n] / MiB:,.1f} MiB)' for n in largest)}; "
                "nothing was kept"
            ),
        )


# On a sandbox image: the digest of the wheel files unpacked into it (`wheels_digest`), and
# their list. A run's secrets follow the digest an admin accepted, so the worker reads what
# the image it runs holds, whatever the requirement strings say (the same pinned version can
# be another file: a newer build tag, a more specific platform wheel, a changed index).
WHEELS_LABEL = "jazzmine.wheels"
WHEELS_LIST_LABEL = "jazzmine.wheels.list"


def wheel_lines(wheel_dir: Path) -> list[str]:
    """Return "file-name sha256" of each wheel in a directory, sorted."""
    lines = []
    for path in sorted(wheel_dir.glob("*.whl")):
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        lines.append(f"{path.name} {digest.hexdigest()}")
    return sorted(lines)


def wheels_digest(lines: list[str] | tuple[str, ...]) -> str:
    """Return the SHA-256 of a wheel list (sorted "name sha256" lines; none: a fixed value)."""
    return hashlib.sha256("".join(f"{line}\n" for line in sorted(lines)).encode()).hexdigest()


def wheels_from_labels(labels: dict[str, str] | None) -> list[str] | None:
    """Return an image's wheel list from its labels; None when it has none or they disagree.

    The list is checked against the digest: a label edited by hand is not believed.
    """
    labels = labels or {}
    digest, text = labels.get(WHEELS_LABEL), labels.get(WHEELS_LIST_LABEL)
    if digest is None or text is None:
        return None
    lines = sorted(line for line in text.split("\n") if line)
    return lines if wheels_digest(lines) == digest else None


def unpack_wheels(
    wheel_dir: Path,
    site_dir: Path,
    log: LogFn,
    *,
    target: WheelTarget | None = None,
    limits: WheelLimits | None = None,
) -> list[str]:
    """Unpack wheels into `site_dir` (missing or empty), refusing any not built for the target
    by name and any that unpacks past the limits (`wheel_limits`).

    Every wheel is checked, tags and central directory, before any is unpacked; a wheel
    refused while unpacking (it wrote more than it declared, it is corrupt, the disk is
    full) empties `site_dir` again: nothing is ever half-installed.
    """
    target = target or WheelTarget.of_host()
    limits = limits or WheelLimits()
    wheels = sorted(wheel_dir.glob("*.whl"))
    for path in wheels:
        _tags_check(path, target)
    existed = site_dir.exists()
    if existed and any(site_dir.iterdir()):
        raise ValueError(f"{site_dir} must be empty: a failed unpacking empties it again")
    with contextlib.ExitStack() as opened:
        archives: dict[str, zipfile.ZipFile] = {}
        sizes: list[WheelSize] = []
        for path in wheels:
            handle = opened.enter_context(open(path, "rb"))
            archive = opened.enter_context(wheel_open(path.name, handle, limits))
            archives[path.name] = archive
            sizes.append(wheel_size(path.name, archive, limits))
            sandbox_check(sizes, limits)  # before the next is parsed: its entries take memory
        site_dir.mkdir(parents=True, exist_ok=True)
        written = WrittenBytes(limits)
        try:
            for name, archive in archives.items():
                written.next_wheel()
                for member in archive.infolist():
                    _extract(name, archive, member, site_dir, written)
                log(f"install: {name}")
        except BaseException:
            shutil.rmtree(site_dir, ignore_errors=True)
            if existed:
                site_dir.mkdir()
            raise
    return [path.name for path in wheels]


def _tags_check(path: Path, target: WheelTarget) -> None:
    """Refuse a wheel whose file name is not a wheel's, or whose tags the target cannot load."""
    try:
        package, _version, _build, tags = parse_wheel_filename(path.name)
    except InvalidWheelFilename as exc:
        raise BuildError(step="install dependencies", package=path.name,
                         message=f"not a wheel file name: {exc}") from None  # fmt: skip
    if not tags & target.tags:
        raise BuildError(
            step="install dependencies",
            package=str(package),
            message=(
                f"{path.name} is built for {', '.join(sorted(str(t) for t in tags))}; "
                f"the sandbox runs {target.key}"
            ),
        )


def _extract(
    name: str,
    wheel: zipfile.ZipFile,
    member: zipfile.ZipInfo,
    site_dir: Path,
    written: WrittenBytes,
) -> None:
    """Extract one wheel member, mapping `*.data/purelib|platlib` into the site root."""
    parts = member.filename.split("/")
    if parts[0].endswith(".data"):
        if len(parts) < 3 or parts[1] not in ("purelib", "platlib"):
            return  # scripts, headers and data files have no use in a sandbox
        parts = parts[2:]
    relative = Path(*parts)
    if relative.is_absolute() or ".." in relative.parts:
        raise refused(name, f"unsafe path in wheel: {member.filename}")
    destination = site_dir / relative
    try:
        if member.is_dir():
            destination.mkdir(parents=True, exist_ok=True)
            return
        destination.parent.mkdir(parents=True, exist_ok=True)
        with wheel.open(member) as source, open(destination, "wb") as target:
            written.copy(name, member, source, target)
    except zipfile.BadZipFile as exc:  # zipfile stops at the declared size: the CRC is off
        raise refused(
            name,
            f"{name} cannot be unpacked: {member.filename} does not hold what its central "
            f"directory says ({exc})",
        ) from None
    # What zipfile raises for other data it cannot read back: a broken deflate stream, a
    # truncated file, a compression method or encryption it does not support.
    except (zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
        raise refused(name, f"{name} cannot be unpacked at {member.filename}: {exc}") from None
    except OSError as exc:  # the disk is full, a name is too long for the file system...
        reason = exc.strerror or str(exc)
        raise refused(name, f"{name}: cannot write {member.filename}: {reason}") from None
