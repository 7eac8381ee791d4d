"""No file a tool call leaves outlives the call: each call works in a directory of its own,
and whatever it left in the sandbox's writable places is moved aside once it is over.

Every tool call runs as the sandbox's one uid, and every one of them can write the same
places (/tmp, /dev/shm, /dev/mqueue). A file one call leaves there can run in the next
call's interpreters, with the next tool's secrets in their environment: a /tmp/package.json
that names itself like a package a node tool requires (node's self-reference, found walking
up from the tool's script), a /tmp/json.py on the path of a `python3 -c` started in /tmp, a
node_modules, a `.env`, a `sitecustomize.py`... whatever its name, whichever interpreter
looks. So no name is singled out:

- each call gets a fresh directory, its cwd, TMPDIR and HOME (a script tool's work dir is made
  in it), so nothing a call searches upwards or on its path is a directory another call made;
- after a call (once its processes are ended), and before one, every entry of every writable
  place that was not there when the sandbox started (by name and inode), other than the
  directories of calls still under way, is moved aside: renamed into a directory of the
  harness's own that nothing searches, then removed as far as it can be (for the space).
  Before, too: what loading a tool wrote, what an unrestricted script (or one handed a
  `Path` by a tool) wrote between calls, is no more the next tool's than a call's leftovers;
- what cannot be moved aside for certain (a rename refused, an entry still there after) ends
  the run: `LeftoverError`, which the toolbox turns into the run's end, never a call.

One listing per place before a call and one after (plus one more only when something was
moved): some ten microseconds a place in a container, whose syscalls pass two seccomp
filters. Nothing walks the trees a call left: a whole directory is moved by one rename.

Only in a sandbox of its own: the harness's parent, the relay, is pid 1 of its namespace,
and its root is read-only, in a container and in bubblewrap alike. A harness started as a
plain process on a machine (tests) shares that machine's /tmp with every other process,
whose files are not a tool's. Such a start must say so (`SHARED_MACHINE_ENV`); a harness that
finds itself elsewhere without it (a runner that starts it another way) runs no tool call:
fail closed, rather than skip the sweep unseen. A pid namespace alone is not a sandbox: one
started on a host with `unshare --pid` (a benchmark did) took the host's writable mounts
for its places, "/" and the engine's data root among them, left a directory of its own in
each, and would have moved aside whatever other processes made there during its life.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import stat
import tempfile
from collections.abc import Collection

from .protocol import SHARED_MACHINE_ENV

# Where a sandbox can write, when its mount table cannot say (it always can in a sandbox).
KNOWN_PLACES = ("/tmp", "/dev/shm", "/dev/mqueue")
# Mounts that are never a tool's files: the kernel's views and the device directory itself.
_NOT_PLACES = ("/proc", "/sys")
_NOT_PLACE_ROOTS = ("/dev", "/dev/pts")
GRAVE_PREFIX = ".jazzmine-aside-"
CALL_PREFIX = "call-"


class LeftoverError(Exception):
    """Something a tool call left could not be moved aside for certain: the run must end."""


def in_own_sandbox() -> bool:
    """Tell whether this process runs in a sandbox of its own: its parent is pid 1, and its
    root is read-only (else the writable places are a machine's, not a sandbox's)."""
    if os.getppid() != 1:
        return False
    try:
        return bool(os.statvfs("/").f_flag & os.ST_RDONLY)
    except OSError:
        return False


def writable_places(mountinfo: str = "/proc/self/mountinfo") -> list[str]:
    """Return every mounted directory this process can write, read from its mount table.

    Raises OSError when the table cannot be read: a sandbox that cannot say where a tool
    can write must not run tools.
    """
    found = set()
    with open(mountinfo, "rb") as handle:
        for line in handle:
            fields = line.split()
            if len(fields) < 6 or b"rw" not in fields[5].split(b","):
                continue
            found.add(_unescape(fields[4]))
    found.update(KNOWN_PLACES)
    found.add(tempfile.gettempdir())
    return sorted(p for p in found if _is_place(p))


def _unescape(field: bytes) -> str:
    """Read a mount point as the mount table spells it (space, tab, newline, \\ as octal)."""
    text = os.fsdecode(field)
    for code in ("\\040", "\\011", "\\012", "\\134"):
        text = text.replace(code, chr(int(code[1:], 8)))
    return text


def _is_place(path: str) -> bool:
    if path in _NOT_PLACE_ROOTS or any(
        path == root or path.startswith(root + "/") for root in _NOT_PLACES
    ):
        return False
    try:
        mode = os.stat(path, follow_symlinks=False).st_mode
    except OSError:
        return False
    return stat.S_ISDIR(mode) and os.access(path, os.W_OK)


class Place:
    """One writable directory: what it held at the start, and where its leftovers go."""

    def __init__(self, path: str) -> None:
        self.path = path
        # The graveyard: renamed into by its descriptor, whatever a tool does to its name.
        self.grave: int | None = None
        try:
            grave = tempfile.mkdtemp(prefix=GRAVE_PREFIX, dir=path)
        except OSError:
            pass  # a place that holds no directory (mqueue): its leftovers are removed
        else:
            self.grave = os.open(grave, os.O_RDONLY | os.O_DIRECTORY)
        self.kept = self.listing()  # by (name, inode): a name taken over is not the same entry

    def listing(self) -> frozenset[tuple[str, int]]:
        with os.scandir(self.path) as entries:
            return frozenset((entry.name, entry.inode()) for entry in entries)

    def leftovers(self, under_way: Collection[str]) -> list[str]:
        """Return the entries neither the start nor a call under way (by name) holds."""
        kept = self.kept
        with os.scandir(self.path) as entries:
            return [
                e.name
                for e in entries
                if (e.name, e.inode()) not in kept and e.name not in under_way
            ]

    def move_aside(self, name: str) -> None:
        """Take one entry out of the place for good; raise LeftoverError when it cannot be."""
        try:
            if self.grave is None:
                _remove(os.path.join(self.path, name))
                return
            aside = os.urandom(8).hex()  # a name no tool can have taken beforehand
            path = os.path.join(self.path, name)
            try:
                os.rename(path, aside, dst_dir_fd=self.grave)
            except PermissionError:
                # A directory moves to another parent only when it is writable itself (its
                # `..` changes): one a call left read-only is made writable first (its own).
                if not stat.S_ISDIR(os.lstat(path).st_mode):
                    raise
                os.chmod(path, 0o700)  # a directory, not a link (no process of a call is left)
                os.rename(path, aside, dst_dir_fd=self.grave)
        except FileNotFoundError:
            if not os.path.lexists(os.path.join(self.path, name)):
                return  # gone already: nothing is left of it
            problem = "the directory it is moved into is gone: a tool call removed it"
        except OSError as exc:
            problem = str(exc.strerror or exc)
        else:
            # Aside, it is harmless; removed too, so that a run's calls do not fill the tmpfs.
            with contextlib.suppress(OSError):
                _remove(aside, dir_fd=self.grave)
            return
        raise LeftoverError(
            f"{os.path.join(self.path, name)}, which a tool call left, could not be moved "
            f"aside ({problem}): the next tool could run it with its secrets"
        )


def _remove(path: str, dir_fd: int | None = None) -> None:
    if stat.S_ISDIR(os.stat(path, dir_fd=dir_fd, follow_symlinks=False).st_mode):
        try:
            os.rmdir(path, dir_fd=dir_fd)
        except OSError:
            shutil.rmtree(path, dir_fd=dir_fd)
    else:
        os.unlink(path, dir_fd=dir_fd)


class CallDirs:
    """The fresh directory of each tool call, and the sweeps around it (see the module)."""

    def __init__(self, *, sweep: bool | None = None) -> None:
        self.sweep_enabled = in_own_sandbox() if sweep is None else sweep
        self.root = tempfile.gettempdir()  # where call directories are made
        try:  # where the worker goes back to between calls
            self._cwd: int | None = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            self._cwd = None  # nothing of the harness depends on its cwd: "/" then
        # The directories of the calls under way (a call made during another's), innermost
        # last, each with the `tempfile.tempdir` it replaced.
        self._under_way: list[tuple[str, str | None]] = []
        self._numbers = itertools.count(1)
        self.places: list[Place] = []
        # Why no call may run, when the places could not be found (told at the first call).
        self.problem: str | None = None
        if not self.sweep_enabled:
            if sweep is None and os.environ.get(SHARED_MACHINE_ENV) != "1":
                self.problem = (
                    "the harness does not run in a sandbox of its own (its parent is not "
                    "pid 1, or its root is writable) and was not told it shares a machine "
                    "on purpose: no tool call runs where what an earlier one left could not "
                    "be moved aside"
                )
            return
        try:
            self.places = [Place(path) for path in writable_places()]
        except OSError as exc:
            self.problem = (
                f"the sandbox's writable places could not be read ({exc.strerror or exc}): "
                "no tool call runs where what an earlier one left could not be moved aside"
            )

    def enter(self) -> str:
        """Sweep, then make and enter the directory of a new call; return its path.

        Raises LeftoverError when the sweep fails, OSError when the directory cannot be made.
        """
        self.sweep()
        # Numbered, not drawn: after the sweep nothing but the calls under way is there, and
        # no process of a call is left to take a name meanwhile (a name taken: the next one).
        while True:
            path = os.path.join(self.root, f"{CALL_PREFIX}{next(self._numbers)}")
            try:
                os.mkdir(path, 0o700)
                break
            except FileExistsError:
                continue
        os.chdir(path)
        self._under_way.append((path, tempfile.tempdir))
        # What the worker's own `tempfile` hands out (a script tool's work dir included).
        tempfile.tempdir = path
        return path

    def leave(self, path: str) -> None:
        """Go back to where the worker was, remove the call's directory and sweep.

        Raises LeftoverError when something the call left cannot be moved aside.
        """
        while self._under_way:
            done, tempdir = self._under_way.pop()
            tempfile.tempdir = tempdir
            if done == path:
                break
        try:
            if self._under_way:
                os.chdir(self._under_way[-1][0])
            elif self._cwd is not None:
                os.fchdir(self._cwd)
            else:
                os.chdir("/")
        except OSError as exc:
            raise LeftoverError(
                f"the worker could not leave a tool call's directory: {exc}"
            ) from None
        try:
            os.rmdir(path)  # most calls leave it empty; what is in it goes with the sweep
        except OSError:
            if not self.sweep_enabled:  # a machine's shared temp dir: removed, nothing else
                shutil.rmtree(path, ignore_errors=True)
        self.sweep()

    def sweep(self) -> None:
        """Move aside every entry of every place that neither the start nor a call under way
        holds; raise LeftoverError when one cannot be, or when one is still there after."""
        if self.problem is not None:
            raise LeftoverError(self.problem)
        # By name: a call under way is an in-process tool that iterates what the script
        # handed it (a script tool's runner never calls back into the script), and the calls
        # made meanwhile run as long as it waits for them, its directory theirs to write too.
        under_way = {os.path.basename(path) for path, _tempdir in self._under_way}
        for place in self.places:
            keep = under_way if place.path == self.root else ()
            try:
                left = place.leftovers(keep)
                if not left:
                    continue
                for name in left:
                    place.move_aside(name)
                still = place.leftovers(keep)
            except OSError as exc:
                raise LeftoverError(
                    f"{place.path} could not be listed ({exc.strerror or exc}): what tool "
                    "calls left there cannot be moved aside"
                ) from None
            if still:
                raise LeftoverError(
                    f"{', '.join(os.path.join(place.path, n) for n in sorted(still))}, which "
                    "a tool call left, is still there after it was moved aside"
                )
