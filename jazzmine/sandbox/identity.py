"""A uid of its own for every sandbox, so that no sandbox spends another's per-user budgets.

The kernel counts some resources per uid across the whole host, not per container: the
pages of every pipe a user holds (`fs.pipe-user-pages-soft`: past it, no pipe of that user
grows, and each new one gets two pages), inotify instances and watches, POSIX message queue
bytes. When every sandbox ran as uid 65534, a script of one team that took its uid's pipe
budget (128 pipes of 1 MiB cost no memory: pages are counted as slots, not filled) left
every other sandbox on the host, of every team, with pipes it could not grow. Each sandbox
now runs as a uid drawn for it alone, in a range no account of a Debian host uses.

Drawn at random, not counted from a file shared by every worker of a host: two workers on
one engine then collide with a chance of one in two billion per pair of live sandboxes
(one in 55,000 on an engine that remaps users, whose range is 16 bits), and this process
never hands out a uid it handed out lately. A collision costs only what every run
paid before: two sandboxes sharing a uid's counters.
"""

from __future__ import annotations

import secrets
import threading
from collections import deque

# Above every account a Debian host makes (system and login accounts, and the subordinate
# ranges /etc/subuid hands out from 100000 are 65536 wide each: 2^31 is far past them).
FIRST_UID = 1_000_000
LAST_UID = 2**31 - 2  # 2^32 - 1 is "no uid"; kernels and tools read uids as signed ints too
# An engine with `userns-remap` maps container uids 0..65535 only; a uid past that range
# fails the container's start. Above the image's own accounts, below nobody (65534).
REMAPPED_FIRST_UID = 10_000
REMAPPED_LAST_UID = 65_533
# How many uids this process remembers handing out, and never draws again meanwhile: far
# more sandboxes than a worker runs at once.
RECENT = 4096


class UidDraw:
    """Draws uids in one range, never one of the last `RECENT` it drew (thread-safe)."""

    def __init__(self, first: int, last: int) -> None:
        if last - first + 1 <= RECENT:
            raise ValueError("the range must be wider than the uids remembered")
        self.first = first
        self.last = last
        self._recent: deque[int] = deque(maxlen=RECENT)
        self._seen: set[int] = set()
        self._lock = threading.Lock()

    def __call__(self) -> int:
        with self._lock:
            while True:
                uid = self.first + secrets.randbelow(self.last - self.first + 1)
                if uid not in self._seen:
                    break
            if len(self._recent) == RECENT:
                self._seen.discard(self._recent[0])
            self._recent.append(uid)
            self._seen.add(uid)
            return uid


_WIDE = UidDraw(FIRST_UID, LAST_UID)
_REMAPPED = UidDraw(REMAPPED_FIRST_UID, REMAPPED_LAST_UID)


def sandbox_uid(*, remapped: bool = False) -> int:
    """Return a uid for one new sandbox (`remapped`: its engine maps only 16-bit uids)."""
    return _REMAPPED() if remapped else _WIDE()


def sandbox_user(*, remapped: bool = False) -> str:
    """Return Docker's `user` for one new sandbox: its own uid, and a group of the same id."""
    uid = sandbox_uid(remapped=remapped)
    return f"{uid}:{uid}"


# What the sandbox's environment says its user is: no passwd entry has its uid, and
# `getpass.getuser()` reads these before it looks one up (and fails).
USER_ENVIRONMENT = {"USER": "sandbox", "LOGNAME": "sandbox"}
