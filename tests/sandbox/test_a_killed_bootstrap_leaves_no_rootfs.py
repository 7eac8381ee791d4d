"""The base image's bootstrap holds its rootfs with a lock; the next one removes what a killed one
left (`scripts/lib/workdirs.sh`, used by `scripts/ensure-base-image.sh`).

A worker SIGKILLed during the bootstrap takes the script and debootstrap with it (the tether),
and no trap of the script runs: its rootfs, a few hundred megabytes, stayed in /tmp for good,
with its chroot's /proc still mounted.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.sandbox.helpers import aged
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "scripts" / "lib" / "workdirs.sh"


def sweep(prefix: Path) -> list[str]:
    """Run the shell sweep as the bootstrap does; return what it says it removed."""
    done = subprocess.run(
        ["bash", "-c", f'. "{LIBRARY}"; set -euo pipefail; workdirs_abandoned_remove "$1" 60',
         "sweep", str(prefix)],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    return done.stdout.split()


def holder(directory: Path) -> subprocess.Popen[bytes]:
    """A process holding a directory's lock as a living bootstrap does (and a child of it)."""
    script = f'exec 9<"{directory}"; flock 9; echo held; sleep 300 & wait'
    process = subprocess.Popen(
        ["bash", "-c", script], stdout=subprocess.PIPE, start_new_session=True
    )
    assert process.stdout is not None and process.stdout.readline() == b"held\n"
    return process


def test_an_abandoned_rootfs_is_removed_and_a_young_one_kept(tmp_path):
    prefix = tmp_path / "jazzmine-rootfs."
    old, young = Path(f"{prefix}old111"), Path(f"{prefix}young2")
    for directory in (old, young):
        (directory / "usr" / "bin").mkdir(parents=True)
        (directory / "usr" / "bin" / "python3").write_text("#!")
    aged(old)
    assert sweep(prefix) == [str(old)]
    assert not old.exists() and young.exists()
    assert sweep(prefix) == []  # twice: nothing more to do, nothing else touched


def test_a_rootfs_held_by_a_living_bootstrap_is_kept_however_old_until_it_dies(tmp_path):
    prefix = tmp_path / "jazzmine-rootfs."
    busy = Path(f"{prefix}busy11")
    busy.mkdir()
    process = holder(busy)
    try:
        aged(busy)
        assert sweep(prefix) == []
        assert busy.exists()
        process.kill()  # the script; its child (debootstrap, in a real bootstrap) lives on
        process.wait()
        assert sweep(prefix) == []  # the child inherited the lock
    finally:
        os.killpg(process.pid, 9)  # the whole bootstrap, as the tether kills it
    wait_until(lambda: sweep(prefix) == [str(busy)], timeout=10, message="never swept")


def test_the_sweep_follows_no_link_and_leaves_what_is_not_a_directory_of_ours(tmp_path):
    prefix = tmp_path / "jazzmine-rootfs."
    victim = tmp_path / "precious"
    (victim / "keep").mkdir(parents=True)
    link = Path(f"{prefix}link11")
    link.symlink_to(victim, target_is_directory=True)
    aged(victim)
    aged(link, follow_symlinks=False)
    fifo = Path(f"{prefix}fifo11")
    os.mkfifo(fifo)
    aged(fifo)
    plain = Path(f"{prefix}file11")
    plain.write_text("not a rootfs")
    aged(plain)
    assert sweep(prefix) == []
    assert (victim / "keep").is_dir() and link.is_symlink() and fifo.exists() and plain.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root, as the bootstrap does")
def test_a_mount_left_inside_is_let_go_and_never_crossed(tmp_path):
    prefix = tmp_path / "jazzmine-rootfs."
    killed = Path(f"{prefix}mount1")
    (killed / "proc").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "data").write_text("not the rootfs's")
    # What a killed debootstrap leaves: a mount in its chroot (here a bind of another tree).
    subprocess.run(["mount", "--bind", str(outside), str(killed / "proc")], check=True)
    try:
        aged(killed)
        assert sweep(prefix) == [str(killed)]
        assert (outside / "data").read_text() == "not the rootfs's"
    finally:
        subprocess.run(["umount", "-l", str(killed / "proc")], check=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="bootstrapping needs root")
def test_the_bootstrap_removes_what_a_killed_one_left_and_its_own_when_it_fails(tmp_path):
    abandoned = tmp_path / "jazzmine-rootfs.killed"
    (abandoned / "var" / "lib").mkdir(parents=True)
    aged(abandoned)
    # A mirror that does not exist: debootstrap fails at once, after the sweep and the mktemp.
    env = {**os.environ, "TMPDIR": str(tmp_path), "JAZZMINE_DEBIAN_MIRROR": "file:///nonexistent"}
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "ensure-base-image.sh"), f"jazzmine/never-made:{os.getpid()}"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"removed an abandoned bootstrap: {abandoned}" in done.stdout
    assert "debootstrap failed" in done.stderr
    assert list(tmp_path.glob("jazzmine-rootfs.*")) == []
