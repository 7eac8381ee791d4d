"""Caps on what a sandbox's wheels unpack to: bytes and entries, per wheel and per sandbox.

A wheel is a zip archive. A download of a few kilobytes can unpack to gigabytes (a file of
zeros deflates about a thousand to one), to millions of files, or to a path thousands of
directories deep, and fill the worker's disk or the image being built. So each wheel's
central directory is read and measured before anything is unpacked, and the bytes actually
written are counted as they are: a central directory can understate what its entries hold.

The limits are the operator's (`JAZZMINE_MAX_WHEEL_*`, `JAZZMINE_MAX_SANDBOX_WHEELS_*`). This
package never reads Django settings: the web passes them in, and `WheelLimits.from_env`
reads the same variables for everyone else.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import IO, BinaryIO

from .errors import BuildError

MiB = 1024 * 1024
STEP = "install dependencies"

# What each limit is called where the operator sets it: errors name it, so they can act.
SETTINGS = {
    "wheel_bytes": "JAZZMINE_MAX_WHEEL_BYTES",
    "wheel_entries": "JAZZMINE_MAX_WHEEL_ENTRIES",
    "sandbox_bytes": "JAZZMINE_MAX_SANDBOX_WHEELS_BYTES",
    "sandbox_entries": "JAZZMINE_MAX_SANDBOX_WHEELS_ENTRIES",
}

# A central directory entry is 46 bytes plus its name, extra field and comment; pip-made
# wheels average about a hundred. A directory larger than this per allowed entry is refused
# before zipfile parses it: its parse holds every entry in memory (~0.6 KiB each, measured),
# so a wheel listing millions of tiny entries would cost the worker gigabytes.
CENTRAL_BYTES_PER_ENTRY = 512

# How deep a wheel's paths may nest, whatever the limits: making and removing a directory
# tree recurses once a level in Python 3.11 (`Path.mkdir(parents=True)`, `shutil.rmtree`),
# so a path a thousand levels deep raised RecursionError half-way through unpacking and
# again in the cleanup, which left the tree on disk for good. Real wheels nest a few dozen.
MAX_PATH_DEPTH = 100

_COPY_CHUNK = 1 << 20


@dataclass(frozen=True)
class WheelLimits:
    """How much a sandbox's wheels may unpack to: bytes and entries, per wheel and in all.

    Entries are the files and directories unpacking makes, the directories a path implies
    included: one entry `a/b/.../z.py` a thousand levels deep makes a thousand directories.
    """

    wheel_bytes: int = 512 * MiB
    wheel_entries: int = 100_000
    sandbox_bytes: int = 1024 * MiB
    sandbox_entries: int = 200_000

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"{SETTINGS[field.name]} must be a positive integer, not {value!r}"
                )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WheelLimits:
        """Read the limits from the environment (the web app's settings read the same names)."""
        environ = os.environ if environ is None else environ
        values: dict[str, int] = {}
        for name, setting in SETTINGS.items():
            raw = environ.get(setting, "").strip()
            if not raw:
                continue
            try:
                values[name] = int(raw)
            except ValueError:
                raise ValueError(f"{setting} must be an integer, not {raw!r}") from None
        return cls(**values)


@dataclass(frozen=True)
class WheelSize:
    """What one wheel's central directory says it unpacks to."""

    name: str
    bytes: int
    entries: int


def refused(wheel: str, message: str) -> BuildError:
    """Return the build error of a wheel refused at unpacking (its files are gone by then)."""
    return BuildError(step=STEP, package=wheel, message=f"{message}; nothing was unpacked")


def amount(size: int) -> str:
    """Return a byte count as the operator sets it, and as a person reads it."""
    return f"{size:,} bytes ({size / MiB:,.1f} MiB)"


def wheel_open(name: str, handle: BinaryIO, limits: WheelLimits) -> zipfile.ZipFile:
    """Open a wheel's zip, refusing one whose central directory is too large to even parse."""
    try:
        # zipfile's own reading of the end record (private, but unchanged since Python 2.6):
        # the parse below reads exactly the directory this names, so the bound checked here
        # is the bound of that parse, whatever a crafted record says.
        end = zipfile._EndRecData(handle)  # type: ignore[attr-defined]
    except (OSError, zipfile.BadZipFile) as exc:
        raise refused(name, f"{name} is not a readable zip archive: {exc}") from None
    if end is None:
        raise refused(name, f"{name} is not a zip archive")
    listed = end[zipfile._ECD_ENTRIES_TOTAL]  # type: ignore[attr-defined]
    directory = end[zipfile._ECD_SIZE]  # type: ignore[attr-defined]
    setting = SETTINGS["wheel_entries"]
    if listed > limits.wheel_entries:
        raise refused(
            name,
            f"{name} lists {listed:,} entries, over the limit of {limits.wheel_entries:,} "
            f"for one wheel ({setting})",
        )
    if directory > limits.wheel_entries * CENTRAL_BYTES_PER_ENTRY:
        raise refused(
            name,
            f"{name}'s central directory is {directory:,} bytes, more than the "
            f"{limits.wheel_entries:,} entries one wheel may hold need ({setting})",
        )
    try:
        return zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise refused(name, f"{name} is not a readable zip archive: {exc}") from None


def wheel_size(name: str, wheel: zipfile.ZipFile, limits: WheelLimits) -> WheelSize:
    """Measure what a wheel's central directory declares; refuse one over a wheel's limits.

    Every entry counts, those the sandbox skips too (scripts, headers): what a wheel holds
    is what it is, not what one installer keeps of it.
    """
    members = wheel.infolist()
    deepest = max(members, key=_depth, default=None)
    if deepest is not None and _depth(deepest) > MAX_PATH_DEPTH:
        raise refused(
            name,
            f"{name} has a path {_depth(deepest):,} levels deep ({deepest.filename[:60]}...), "
            f"deeper than the {MAX_PATH_DEPTH} levels any wheel may nest (a fixed limit)",
        )
    entries = _entries(members, limits.wheel_entries)
    if entries > limits.wheel_entries:
        raise refused(
            name,
            f"{name} unpacks to more than {limits.wheel_entries:,} files and directories, the "
            f"limit for one wheel ({SETTINGS['wheel_entries']})",
        )
    declared = sum(member.file_size for member in members)
    if declared > limits.wheel_bytes:
        raise refused(
            name,
            f"{name} unpacks to {amount(declared)}, over the limit of "
            f"{amount(limits.wheel_bytes)} for one wheel ({SETTINGS['wheel_bytes']})",
        )
    return WheelSize(name, declared, entries)


def _parts(member: zipfile.ZipInfo) -> list[str]:
    """Return the path components a member's name makes on disk."""
    return [part for part in member.filename.split("/") if part not in ("", ".")]


def _depth(member: zipfile.ZipInfo) -> int:
    return len(_parts(member))


def _entries(members: list[zipfile.ZipInfo], limit: int) -> int:
    """Count the files and directories the members make, stopping once past `limit`.

    A tree of path components, not a set of path strings: a deep path's prefixes would cost
    the square of its length to build, and a wheel is free to be made of deep paths.
    """
    root: dict[str, dict] = {}
    count = 0
    for member in members:
        node = root
        for part in _parts(member):
            child = node.get(part)
            if child is None:
                child = node[part] = {}
                count += 1
                if count > limit:
                    return count
            node = child
    return count


def sandbox_check(sizes: list[WheelSize], limits: WheelLimits) -> None:
    """Refuse a sandbox's wheels measured so far if together they pass the sandbox's limits.

    Called after each wheel is measured, so the last one is the wheel that crossed the line;
    the largest are named too, since they are what an author would drop.
    """
    last = sizes[-1]
    total = sum(s.bytes for s in sizes)
    if total > limits.sandbox_bytes:
        largest = sorted(sizes, key=lambda s: s.bytes, reverse=True)[:3]
        raise refused(
            last.name,
            f"{last.name} brings this sandbox's wheels to {amount(total)}, over the limit of "
            f"{amount(limits.sandbox_bytes)} for all of a sandbox's wheels "
            f"({SETTINGS['sandbox_bytes']}); the largest: "
            + ", ".join(f"{s.name} ({s.bytes / MiB:,.1f} MiB)" for s in largest),
        )
    entries = sum(s.entries for s in sizes)
    if entries > limits.sandbox_entries:
        largest = sorted(sizes, key=lambda s: s.entries, reverse=True)[:3]
        raise refused(
            last.name,
            f"{last.name} brings this sandbox's wheels to {entries:,} files and directories, "
            f"over the limit of {limits.sandbox_entries:,} for all of a sandbox's wheels "
            f"({SETTINGS['sandbox_entries']}); the largest: "
            + ", ".join(f"{s.name} ({s.entries:,})" for s in largest),
        )


class WrittenBytes:
    """The bytes unpacking actually wrote, per wheel and in all, against the limits.

    The declared sizes were checked already; these are counted as the data comes out, so a
    member that holds more than its central directory entry says is stopped at that size.
    """

    def __init__(self, limits: WheelLimits) -> None:
        self.limits = limits
        self.wheel = 0
        self.sandbox = 0

    def next_wheel(self) -> None:
        self.wheel = 0

    def copy(
        self, name: str, member: zipfile.ZipInfo, source: IO[bytes], target: IO[bytes]
    ) -> None:
        """Copy one member's data, refusing it as soon as it passes a limit."""
        written = 0
        while block := source.read(_COPY_CHUNK):
            written += len(block)
            self.wheel += len(block)
            self.sandbox += len(block)
            if written > member.file_size:
                raise refused(
                    name,
                    f"{name}: {member.filename} holds more than the {member.file_size:,} "
                    "bytes its central directory declares",
                )
            for kind, total, limit in (
                ("wheel_bytes", self.wheel, self.limits.wheel_bytes),
                ("sandbox_bytes", self.sandbox, self.limits.sandbox_bytes),
            ):
                if total > limit:
                    raise refused(
                        name,
                        f"{name} wrote more than {amount(limit)} ({SETTINGS[kind]}) although "
                        "its central directory declared less",
                    )
            target.write(block)
