"""A wheel whose central directory understates its sizes is refused, having written no more
than it declared.

The sizes a wheel declares are the attacker's to write: a member that says 1,000 bytes can
hold 64 MiB of deflated zeros, and a check of the declared sizes alone lets it through. So
the bytes are counted as they are written, each member stopped at its declared size, and a
member whose data is not what its header says fails the build by name. Before, the unpacker
raised zipfile's own `BadZipFile` (no build error naming the wheel) and left what it had
written of the wheel in the site directory.
"""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path

import pytest

from jazzmine.core.tools import SandboxConfig, ToolRegistry
from jazzmine.sandbox import BuildError, SandboxBuilder
from jazzmine.sandbox import wheels as wheels_module
from jazzmine.sandbox.bwrap import stage_run_dir
from tests.hostile_wheels import ZEROS, index_wheel, understate, write_index

SANDBOX = "lying"
WHEEL = "jzlie-1.0-py3-none-any.whl"
DECLARED = 1000


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An index serving `jzlie`: 64 MiB of zeros whose headers say 1,000 bytes (the 16 MiB
    limit of a wheel is far above what it declares, far below what it holds)."""
    files = {"jzlie/__init__.py": b"OK = 1\n", "jzlie/zeros.bin": ZEROS}
    url = write_index(tmp_path / "index", {"jzlie": {"1.0": files}},
                      compression=zipfile.ZIP_DEFLATED)  # fmt: skip
    understate(index_wheel(tmp_path / "index", "jzlie"), "jzlie/zeros.bin", DECLARED)
    monkeypatch.setenv("JAZZMINE_PIP_INDEX_URL", url)
    monkeypatch.setenv("JAZZMINE_MAX_WHEEL_BYTES", str(16 * 1024 * 1024))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


@pytest.fixture
def written(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """The bytes the unpacker writes to each file it opens for writing, by file name."""
    sizes: dict[str, int] = {}

    class Counted:
        def __init__(self, handle, name: str) -> None:
            self.handle, self.name = handle, name
            sizes[name] = 0

        def write(self, data: bytes) -> int:
            sizes[self.name] += len(data)
            return self.handle.write(data)

        def __getattr__(self, attribute: str):
            return getattr(self.handle, attribute)

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            self.handle.close()

    def counting_open(file, mode="r", *args, **kwargs):
        handle = open(file, mode, *args, **kwargs)
        return Counted(handle, Path(file).name) if "w" in mode else handle

    monkeypatch.setattr(wheels_module, "open", counting_open, raising=False)
    return sizes


def builder(cache: Path) -> SandboxBuilder:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=SANDBOX, dependencies=["jzlie==1.0"]))
    return SandboxBuilder(registry, cache_dir=cache)  # limits: the environment's


def test_the_wheel_is_refused_by_name_and_its_site_is_left_empty(tmp, tmp_path, written):
    dest = tmp_path / "runtime"
    with pytest.raises(BuildError) as caught:
        builder(tmp_path / "cache").stage(SANDBOX, dest)
    assert (caught.value.step, caught.value.package) == ("install dependencies", WHEEL)
    text = str(caught.value)
    assert "jzlie/zeros.bin does not hold what its central directory says" in text, text
    assert written.get("zeros.bin", 0) <= DECLARED  # never past what it declared
    assert list((dest / "site").iterdir()) == []


def test_a_bubblewrap_run_is_refused_and_leaves_no_directory(tmp, tmp_path):
    with pytest.raises(BuildError, match="does not hold what its central directory says"):
        stage_run_dir(builder(tmp_path / "cache"), SANDBOX)
    assert list(tmp.glob("jazzmine-bwrap-*")) == []
