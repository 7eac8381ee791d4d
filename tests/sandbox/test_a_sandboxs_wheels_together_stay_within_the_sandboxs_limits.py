"""A sandbox's wheels together stay within the sandbox's limits, each one within its own.

A per-wheel cap alone is split by any author: three wheels of 10 MiB of zeros each pass a
16 MiB limit one by one. Now the sum over all of a sandbox's wheels is measured too, from
their central directories, before any is unpacked (`JAZZMINE_MAX_SANDBOX_WHEELS_BYTES`,
`JAZZMINE_MAX_SANDBOX_WHEELS_ENTRIES`), and the error names the wheel that crossed the line.
"""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path

import pytest

from jazzmine.core.tools import SandboxConfig, ToolRegistry
from jazzmine.sandbox import BuildError, SandboxBuilder
from jazzmine.sandbox.bwrap import stage_run_dir
from jazzmine.sandbox.workdirs import workdir_remove
from tests.hostile_wheels import tiny_files, write_index

SANDBOX = "split-bomb"
PARTS = ("jzparta", "jzpartb", "jzpartc")


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An index serving three parts of a bomb twice over: by bytes (10 MiB of zeros each) and
    by entries (400 empty modules each); limits each part is within and two parts are not."""
    projects = {name: {"1.0": {f"{name}/zeros.bin": bytes(10 * 1024 * 1024)}} for name in PARTS}
    for name in PARTS:
        projects[name + "files"] = {"1.0": tiny_files(400, package=name + "files")}
    url = write_index(tmp_path / "index", projects, compression=zipfile.ZIP_DEFLATED)
    monkeypatch.setenv("JAZZMINE_PIP_INDEX_URL", url)
    monkeypatch.setenv("JAZZMINE_MAX_WHEEL_BYTES", str(16 * 1024 * 1024))
    monkeypatch.setenv("JAZZMINE_MAX_WHEEL_ENTRIES", "1000")
    monkeypatch.setenv("JAZZMINE_MAX_SANDBOX_WHEELS_BYTES", str(24 * 1024 * 1024))
    monkeypatch.setenv("JAZZMINE_MAX_SANDBOX_WHEELS_ENTRIES", "1000")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def builder_of(dependencies: list[str], cache: Path) -> SandboxBuilder:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=SANDBOX, dependencies=dependencies))
    return SandboxBuilder(registry, cache_dir=cache)  # limits: the environment's


@pytest.mark.parametrize(
    ("suffix", "setting", "total"),
    [
        ("", "JAZZMINE_MAX_SANDBOX_WHEELS_BYTES", "25,165,824 bytes"),
        ("files", "JAZZMINE_MAX_SANDBOX_WHEELS_ENTRIES", "1,000"),
    ],
    ids=["bytes", "entries"],
)
def test_wheels_each_within_their_limit_are_refused_together_past_the_sandboxs(
    suffix, setting, total, tmp, tmp_path
):
    cache = tmp_path / "cache"
    # Two parts fit the sandbox, each alone fits a wheel's limit.
    two = [f"{name}{suffix}==1.0" for name in PARTS[:2]]
    runtime_dir, wheels = stage_run_dir(builder_of(two, cache), SANDBOX)
    assert len(wheels) == 2
    workdir_remove(runtime_dir)

    # The third crosses the sandbox's line: refused before any of the three is unpacked.
    dest = tmp_path / "runtime"
    three = [f"{name}{suffix}==1.0" for name in PARTS]
    with pytest.raises(BuildError) as caught:
        builder_of(three, cache).stage(SANDBOX, dest)
    crossing = f"{PARTS[2]}{suffix}-1.0-py3-none-any.whl"
    assert (caught.value.step, caught.value.package) == ("install dependencies", crossing)
    text = str(caught.value)
    assert setting in text and total in text and crossing in text, text
    assert list((dest / "site").iterdir()) == []

    with pytest.raises(BuildError, match=setting):
        stage_run_dir(builder_of(three, cache), SANDBOX)
    assert list(tmp.glob("jazzmine-bwrap-*")) == []
